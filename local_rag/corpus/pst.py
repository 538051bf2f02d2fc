"""Outlook data files: a ``.pst`` (an archive, "Outlook Data File") or an ``.ost`` (Outlook's offline copy of an
Exchange or Outlook.com mailbox), read through libpff (``pypff``, the ``docs`` extra: libyal's C library, the one
forensic tools such as plaso use; LGPL-3.0) as one document: a section a message, as a mailbox is read
(`local_rag.corpus.mbox`).

Only mail folders are read: calendars, contacts, tasks, notes and Outlook's own settings folders are left out, and so
are Deleted Items, Junk E-mail and Sync Issues (copies of failed syncs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import format_datetime, getaddresses
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus.mbox import drop_known_quotes, message_heading
from local_rag.corpus.progress import part_bar
from local_rag.corpus.rtf import rtf_text
from local_rag.corpus.sections import Document, Section, UnreadableFile, decode_text
from local_rag.corpus.web import mail_document, parse_email

__all__ = ["read_pst"]

log = logging.getLogger(__name__)

# the sections of a message's attached documents and the notes of those not read, from (name, bytes) and a heading
Attachments = Callable[[list[tuple[str, bytes]], str], tuple[list[Section], list[str]]]

# MAPI properties read from the record sets (MS-OXPROPS)
_CONTAINER_CLASS, _DISPLAY_NAME, _RECIPIENT_TYPE = 0x3613, 0x3001, 0x0C15
_RECIPIENT_KINDS = {1: "To", 2: "Cc"}  # 3, Bcc: not shown, as a received message does not show it

# the store's own top folders, which Outlook does not show: left out of a folder's path ("Inbox/Clients")
_STORE_ROOTS = frozenset({"Top of Personal Folders", "Top of Outlook data file", "Root - Mailbox", "IPM_SUBTREE"})

# mail folders of deleted mail, spam and failed syncs: left out (Outlook's English names and those of a few languages)
_LEFT_OUT_FOLDERS = frozenset({"deleted items", "junk e-mail", "junk email", "sync issues", "gelöschte elemente",
                               "junk-e-mail", "éléments supprimés", "courrier indésirable", "elementos eliminados",
                               "correo no deseado", "posta eliminata", "posta indesiderata", "verwijderde items",
                               "ongewenste e-mail", "itens excluídos", "lixo eletrônico"})


def read_pst(path: Path, attachments: Attachments, wanted: Callable[[str, int], bool]) -> Document:
    """The messages of an Outlook data file's mail folders, a section each, headed by subject, sender and day; the
    text opens with the folder, sender, date, recipients and attachments' names, then the body (plain text, else the
    HTML's text, else the RTF's); attached documents are read after their message (``attachments``; only those of a
    name and size ``wanted`` are taken out of the file: not a film, not the pictures of a newsletter); the quote of a
    message the file holds is cut (`local_rag.corpus.mbox.drop_known_quotes`). The file's name is the title.

    Raises:
        UnreadableFile: not an Outlook data file, or one that holds no message in a mail folder.
    """
    pypff = require("pypff", "reading Outlook data files (.pst, .ost)")
    with path.open("rb") as fh:
        if fh.read(4) != b"!BDN":
            raise UnreadableFile("not an Outlook data file (no PST/OST header)")
    store = pypff.file()
    try:
        store.open(str(path))
    except OSError as exc:
        raise UnreadableFile(f"damaged Outlook data file ({exc})") from exc
    document = Document(path.stem, [])
    messages: list[int] = []
    left_out = 0
    try:
        found = list(_mail_folders(store.get_root_folder(), ""))
        left_out = sum(folder.number_of_sub_messages for _, folder, keep in found if not keep)
        folders = [(where, folder) for where, folder, keep in found if keep]
        total = sum(folder.number_of_sub_messages for _, folder in folders)
        bar = part_bar(total, path.name[:30], "message", least=50)
        for where, folder in folders:
            for index in range(folder.number_of_sub_messages):
                try:
                    message = folder.get_sub_message(index)
                    mail, heading, files = _message(message, where, wanted)
                except Exception as exc:  # noqa: BLE001 - one damaged message of a user's file: the others are read
                    document.notes.append(f"a message of {where} not read ({type(exc).__name__}: {exc})")
                    continue
                finally:
                    if bar is not None:
                        bar.update(1)
                messages.append(len(document.sections))
                document.sections += [Section(s.text, heading=heading) for s in mail.sections]
                sections, notes = attachments(files, heading)
                document.sections += sections
                document.notes += [f"{heading}: {note}" for note in notes]
        if bar is not None:
            bar.close()
    finally:
        store.close()
    drop_known_quotes(document.sections, messages)
    document.pages = len(messages)
    if left_out:
        log.warning("note: %s: %d message(s) in Deleted Items, Junk E-mail or Sync Issues left out, as Outlook's "
                    "search leaves them out", path.name, left_out)
    if not messages:
        raise UnreadableFile("no message in its mail folders" + (f" ({left_out} in Deleted Items or Junk E-mail)"
                                                                 if left_out else ""))
    return document


def _mail_folders(folder: Any, where: str) -> Iterator[tuple[str, Any, bool]]:
    """(path, folder, read it) of the folders under ``folder`` that may hold mail (their container class unset or
    ``IPF.Note...``): False for Deleted Items, Junk E-mail and Sync Issues (and what they hold)."""
    for sub in folder.sub_folders:
        kind = _property(sub, _CONTAINER_CLASS) or "IPF.Note"
        if not (kind == "IPF" or kind.startswith("IPF.Note")):
            continue  # a calendar, contacts, tasks, notes, Outlook's own settings
        name = " ".join((sub.name or "").split())
        inner = where if name in _STORE_ROOTS else f"{where}/{name}" if where else name
        if name.lower() in _LEFT_OUT_FOLDERS:
            yield inner, sub, False
            yield from ((w, f, False) for w, f, _ in _mail_folders(sub, inner))
        else:
            yield inner, sub, True
            yield from _mail_folders(sub, inner)


def _message(message: Any, where: str, wanted: Callable[[str, int], bool]
             ) -> tuple[Document, str, list[tuple[str, bytes]]]:
    """One message as a mailbox's is read: (its text as a document, its heading, its attached files ``wanted``)."""
    headers = parse_email((message.transport_headers or "").encode("utf-8", "replace"))
    sent: datetime | None = message.delivery_time or message.client_submit_time
    sent = sent.replace(tzinfo=UTC) if sent is not None and sent.tzinfo is None else sent  # libpff: UTC
    sender = " ".join((message.sender_name or "").split())
    address = next((a for _, a in getaddresses([str(headers.get("from") or "")]) if "@" in a), "")
    recipients = _recipients(message, headers)
    attached = [(str(a.long_filename or ""), a) for a in message.attachments]
    files = [(name, a.read_buffer(a.size) if a.size and wanted(name, a.size) else b"") for name, a in attached]
    fields = [("Folder", where), ("From", f"{sender} <{address}>" if sender and address else sender or address),
              ("Date", format_datetime(sent) if sent else ""), *recipients,
              ("Attachments", ", ".join(name for name, _ in files if name))]
    plain, html = _text(message.plain_text_body), ""
    if not plain.strip() and message.html_body:
        html = _text(message.html_body)
    elif not plain.strip() and message.rtf_body:
        try:
            plain = rtf_text(bytes(message.rtf_body))[1]
        except ValueError:
            plain = ""
    subject = " ".join((message.subject or "").split())
    mail = mail_document(fields, plain, html, subject, "(no subject)")
    return mail, message_heading(mail.title, sender or address, sent), [(n, d) for n, d in files if n and d]


def _recipients(message: Any, headers: Any) -> list[tuple[str, str]]:
    """("To", names), ("Cc", names) of a message: from its Internet headers, else from its recipient table."""
    if headers.get("to") or headers.get("cc"):
        return [(field, " ".join(str(headers.get(field) or "").split())) for field in ("To", "Cc")]
    kinds: dict[str, list[str]] = {"To": [], "Cc": []}
    table = message.recipients
    for record in (table.record_sets if table is not None else []):
        values = {entry.entry_type: entry for entry in record.entries}
        name = values.get(_DISPLAY_NAME)
        kind = values.get(_RECIPIENT_TYPE)
        field = _RECIPIENT_KINDS.get(int.from_bytes(kind.data[:4], "little") if kind is not None and kind.data else 1)
        if name is not None and field is not None:
            kinds[field].append(" ".join(name.get_data_as_string().split()))
    return [(field, ", ".join(names)) for field, names in kinds.items()]


def _property(item: Any, entry_type: int) -> str:
    """A string property of a folder or message ("" when it has none)."""
    for record in item.record_sets:
        for entry in record.entries:
            if entry.entry_type == entry_type and entry.value_type in (0x1E, 0x1F):
                return str(entry.get_data_as_string() or "")
    return ""


def _text(data: bytes | str | None) -> str:
    """A body as libpff gives it (bytes: UTF-8, else in the encoding that fits, as a text file's), as text."""
    if not data:
        return ""
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8").rstrip("\x00")
    except UnicodeDecodeError:
        return decode_text(bytes(data))[0].rstrip("\x00")

