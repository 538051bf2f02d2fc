"""Mailboxes: an ``.mbox`` file (Gmail's export by Google Takeout, Thunderbird's ImportExportTools NG, a mail
server's archive) or an Apple Mail export (a ``NAME.mbox`` folder whose messages are in a file named ``mbox``), read
as one document: a section a message, headed by its subject, its attached documents after it.

The standard library's `mailbox` finds the messages (the ``From `` lines); each is read as an ``.eml`` is
(`local_rag.corpus.web.email_document`). Gmail's Spam and Trash are left out, as Gmail's own search leaves them out.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from email.message import EmailMessage
from email.utils import parseaddr, parsedate_to_datetime
from pathlib import Path

from local_rag.corpus.progress import part_bar
from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name
from local_rag.corpus.web import email_document, is_email, parse_email

__all__ = ["LEFT_OUT_LABELS", "drop_known_quotes", "is_apple_mailbox", "left_out_mail", "mail_store_part",
           "mail_store_suffix", "message_heading", "read_mbox"]

log = logging.getLogger(__name__)

#: Gmail labels (Google Takeout's ``X-Gmail-Labels``, in lower case) of messages left out, as Gmail's search leaves
#: them out: Spam and Trash, Trash as Gmail names it in German, French, Spanish, Italian, Dutch and Portuguese
LEFT_OUT_LABELS = frozenset({"spam", "trash", "papierkorb", "corbeille", "papelera", "cestino", "prullenbak", "lixeira"})

# labels that tell how a message was handled, not what it is about: not shown
_STATE_LABELS = frozenset({"opened", "unread"})

# the sections of a message's attached documents and the notes of those not read, for its subject
Attachments = Callable[[EmailMessage, str], tuple[list[Section], list[str]]]


# a body's line that began "From " was written ">From " (">>From " for ">From "), lest it begin a message: undone
_FROM_QUOTE = re.compile(rb"^>(>*From )", re.MULTILINE)


def is_apple_mailbox(path: Path) -> bool:
    """``path`` is the file of messages of an Apple Mail export (``Inbox.mbox/mbox``)."""
    return path.name == "mbox" and path.parent.suffix.lower() == ".mbox"


def mail_store_suffix(path: Path) -> str:
    """How a file of a mail program's own store is read, by where it lies, its name saying nothing: ``.mbox`` for an
    Apple Mail export's ``mbox`` and a Thunderbird mail folder (``Inbox`` beside its summary ``Inbox.msf``, in a
    profile's ``Mail/Local Folders`` or ``ImapMail/SERVER``); ``.eml`` for a message of a Maildir (``cur/`` or
    ``new/`` beside ``tmp/``: mutt, Evolution, Dovecot, offlineimap); else "".

    Example:
        >>> mail_store_suffix(Path("Suppliers.mbox/mbox")), mail_store_suffix(Path("notes/todo"))
        ('.mbox', '')
    """
    if is_apple_mailbox(path) or path.with_name(path.name + ".msf").is_file():
        return ".mbox"
    if path.parent.name in ("cur", "new") and _is_maildir(path.parent.parent):
        return ".eml"
    return ""


def _is_maildir(folder: Path) -> bool:
    return all((folder / name).is_dir() for name in ("cur", "new", "tmp"))


def mail_store_part(path: Path) -> bool:
    """``path`` belongs to a mail program's store but holds no mail to read: a Thunderbird folder's summary
    (``.msf``) or an empty folder (a folder of subfolders), an Apple Mail export's ``Info.plist`` and table of
    contents, a Maildir's messages being delivered (``tmp/``) and its server's files."""
    if path.with_name(path.name + ".msf").is_file() and path.stat().st_size == 0:
        return True
    if _is_maildir(path.parent) or path.parent.name == "tmp" and _is_maildir(path.parent.parent):
        return True  # a message being delivered (tmp/), the server's own files (dovecot-uidlist, maildirfolder)
    if path.suffix.lower() == ".msf":
        return path.with_suffix("").is_file() or path.with_suffix(".sbd").is_dir()
    return path.parent.suffix.lower() == ".mbox" and path.name != "mbox" and (path.parent / "mbox").is_file()


def left_out_mail(path: Path) -> bool:
    """``path`` is a mail folder of deleted mail or spam (Thunderbird's ``Trash`` and ``Junk``, an IMAP account's
    ``[Gmail].sbd/Spam``, an Apple export of ``Deleted Messages.mbox``) or a Maildir message marked deleted (a ``T``
    among the flags that end its name, ``...:2,ST``): not read, as mail programs leave them out of a search."""
    kind = mail_store_suffix(path)
    if kind == ".eml":
        return _trashed(path.name)
    name = path.parent.stem if is_apple_mailbox(path) else path.name
    return kind == ".mbox" and " ".join(name.lower().split()) in _LEFT_OUT_FOLDERS


def _trashed(name: str) -> bool:
    """A Maildir message's name says it is marked deleted (flag ``T``; Dovecot on Windows writes ``;`` or ``!`` for
    ``:``).

    Example:
        >>> _trashed("1762160000.M1P2.host:2,ST"), _trashed("1762160000.M1P2.host,U=7:2,FS"), _trashed("1762.M1.host")
        (True, False, False)
    """
    flags = re.search(r"[:;!]2,([A-Za-z]*)$", name)
    return flags is not None and "T" in flags.group(1)


_LEFT_OUT_FOLDERS = LEFT_OUT_LABELS | {"junk", "junk e-mail", "junk email", "deleted items", "deleted messages",
                                       "bin"}


def read_mbox(path: Path, attachments: Attachments) -> Document:
    """The messages of a mailbox, a section each: its subject the heading; its sender, date, recipients, Gmail labels
    and attachments' names, then its body, the text (`local_rag.corpus.web.email_document`); the sections of its
    attached documents (``attachments``) after it. The mailbox's name is the title. A message that cannot be parsed
    is a note, the others read.

    Raises:
        UnreadableFile: not a mailbox (no ``From `` line first), or one that holds no message to read.
    """
    with path.open("rb") as fh:
        if not fh.read(5) == b"From ":
            raise UnreadableFile('not a mailbox (an mbox file begins with a "From " line)')
    title = path.parent.stem if is_apple_mailbox(path) else path.stem if path.suffix.lower() == ".mbox" else path.name
    document = Document(title, [])
    left_out = damaged = 0
    messages: list[int] = []  # the section of each message
    for number, message in _messages(path):
        if message is None:
            damaged += 1
            continue
        labels = _labels(" ".join(str(message.get("x-gmail-labels") or "").split()))
        if LEFT_OUT_LABELS & {label.lower() for label in labels}:
            left_out += 1
            continue
        shown = ", ".join(label for label in labels if label.lower() not in _STATE_LABELS)
        mail = email_document(message, "(no subject)", [("Labels", shown)])
        messages.append(len(document.sections))
        heading = _heading(mail.title, message)
        document.sections += [Section(s.text, heading=heading) for s in mail.sections]
        sections, notes = attachments(message, heading)
        document.sections += sections
        document.notes += [f"message {number}: {note}" for note in notes]
    drop_known_quotes(document.sections, messages)
    document.pages = len(messages)  # what the build's "read: mbox N message(s) at N/s" counts
    if damaged:
        document.notes.append(f"{damaged} message(s) could not be parsed and were left out")
    if left_out:
        log.warning("note: %s: %d message(s) labelled Spam or Trash left out, as Gmail's search leaves them out",
                    path.name if not is_apple_mailbox(path) else f"{title}.mbox", left_out)
    if not document.sections:
        raise UnreadableFile("no message to read in the mailbox" + (f" ({left_out} in Spam or Trash)" if left_out else ""))
    return document


def _heading(subject: str, message: EmailMessage) -> str:
    """A message's section heading (`message_heading`) from its From and Date headers.

    Example:
        >>> from local_rag.corpus.web import parse_email
        >>> _heading("Re: Pumps", parse_email(b"From: Ana Silva <ana@example.org>\\nDate: Mon, 3 Nov 2025 09:12:00 +0000\\n\\n"))
        'Re: Pumps (Ana Silva, 3 Nov 2025)'
    """
    name, address = parseaddr(str(message.get("from") or ""))
    try:
        sent = parsedate_to_datetime(str(message.get("date") or ""))
    except (TypeError, ValueError, IndexError):
        sent = None
    return message_heading(subject, name or address, sent)


def message_heading(subject: str, sender: str, sent: datetime | None) -> str:
    """A message's section heading: its subject, then who sent it and when, which tell the replies of a thread apart
    in a list of sources ("Re: Pump station 4 (Ana Silva, 3 Nov 2025)")."""
    when = day_name(sent) if sent is not None else ""
    about = ", ".join(x for x in (" ".join(sender.split()), when) if x)
    return f"{subject} ({about})" if about else subject


def drop_known_quotes(sections: list[Section], messages: list[int]) -> None:
    """Cut from each message the earlier message it quotes at its end (a reply's "On Mon, Ana wrote:" and its ``>``
    lines, as Gmail, Apple Mail and Thunderbird write them; Outlook's "-----Original Message-----" or "From: ...
    Sent: ..." block and the message under it) when that message is in the mailbox too: a thread of ten
    replies held its first message ten times, and a search for it found ten copies. A quote of a message not in the
    mailbox, a part of one, or replies written between quoted lines are kept (``messages``: the index of each message's
    section, its text as `local_rag.corpus.web.email_document` writes it)."""
    bodies = [(index, _body(sections[index].text)) for index in messages]
    known = {_squeezed(body) for _, body in bodies}
    for index, body in bodies:
        found = _trailing_quote(body)
        if found is not None and _squeezed(found[1]) in known:
            text = sections[index].text
            sections[index].text = text[:len(text) - len(body) + found[0]].rstrip()


# the line that introduces a quote ("On Mon, 3 Nov 2025 at 09:12, Ana <ana@example.org> wrote:", "Am ... schrieb ...:")
_ATTRIBUTION = re.compile(r"(?:\n[^\n>][^\n]*){1,2}:[ \t]*\n*$")


def _trailing_quote(body: str) -> tuple[int, str] | None:
    """(where it begins, its text unquoted one level) of the quote that ends ``body`` (its lines begin with ``>``),
    with the line or two introducing it (they end with ":"), or None.

    Example:
        >>> _trailing_quote("Agreed.\\n\\nOn Mon, Ana wrote:\\n> Replace the pump?\\n>\\n> > Which one?")
        (9, 'Replace the pump?\\n\\n> Which one?')
        >>> _trailing_quote("> Replace the pump?\\nYes, on Friday.") is None
        True
    """
    lines = body.split("\n")
    start = len(lines)
    while start and (lines[start - 1].startswith(">") or not lines[start - 1].strip() and start < len(lines)):
        start -= 1
    quoted = [line for line in lines[start:] if line.strip()]
    if not quoted or not all(line.startswith(">") for line in quoted):
        return _outlook_quote(body)
    head = "\n".join(lines[:start])
    attribution = _ATTRIBUTION.search("\n" + head)
    cut = len(head) - len(attribution.group()) + 1 if attribution and len(attribution.group()) < 300 else len(head)
    unquoted = "\n".join(line[1:].removeprefix(" ") if line.startswith(">") else line for line in lines[start:])
    return max(cut, 0), unquoted.strip()


# where Outlook's reply or forward puts the message answered: a separator line, or its header block itself
_OUTLOOK_SEPARATOR = re.compile(
    r"^[ \t]*(?:-{3,}[ \t]*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Messaggio "
    r"originale|Oorspronkelijk bericht|Mensagem original|Forwarded message)[ \t]*-{3,}|_{10,})[ \t]*$"
    r"|^[ \t]*\*?(?:From|Von|De|Da|Van)\*?:[^\n]*\n[ \t]*\*?(?:Sent|Date|Gesendet|Datum|Envoyé|Enviado el|Inviato|"
    r"Verzonden)\*?:", re.MULTILINE | re.IGNORECASE)


# a line of the header block Outlook writes over the message answered ("From: ...", "Sent: ...", "Betreff: ...")
_OUTLOOK_HEADER = re.compile(r"^[ \t]*\*?(?:From|Sent|Date|To|Cc|Subject|Importance|Von|Gesendet|Datum|An|Betreff|"
                             r"De|Envoyé|À|Objet|Enviado el|Para|Asunto|Da|Inviato|A|Oggetto|Van|Verzonden|Aan|"
                             r"Onderwerp)\*?:", re.IGNORECASE)


def _outlook_quote(body: str) -> tuple[int, str] | None:
    """(where it begins, the message answered) of the quote Outlook puts under a reply or a forward: from its
    separator ("-----Original Message-----", a line of underscores) or its header block ("From: ...", "Sent: ...")
    to the end, the header lines left out of the message answered; None when there is none.

    Example:
        >>> _outlook_quote("Yes.\\n\\n-----Original Message-----\\nFrom: Ana\\nSent: Monday\\nSubject: Pump\\n\\nReplace it?")
        (6, 'Replace it?')
        >>> _outlook_quote("Yes.\\n\\nFrom: Ana\\nSent: Monday\\nTo: Bo\\n\\nReplace it?")
        (6, 'Replace it?')
    """
    found = _OUTLOOK_SEPARATOR.search(body)
    if found is None:
        return None
    lines = body[found.start():].split("\n")
    start = 1 if not _OUTLOOK_HEADER.match(lines[0]) else 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and _OUTLOOK_HEADER.match(lines[start]):  # the header block, to its blank line: a long
        while start < len(lines) and lines[start].strip():  # "To:" goes on over several lines
            start += 1
    return found.start(), "\n".join(lines[start:]).strip()


def _squeezed(text: str) -> str:
    """``text`` with no white space and no quote marks: a message as a reply quotes it, rewrapped or not."""
    return "".join(text.split()).replace(">", "")  # str.split: a fifth of the time of a regular expression


def _body(text: str) -> str:
    """The body of a message's text as `local_rag.corpus.web.mail_document` writes it: its header lines ("Name:
    value", whatever the fields a reader gives: an Outlook file's open with "Folder:"), a blank line, the body."""
    return text.split("\n\n", 1)[1] if _HEADER_LINE.match(text) and "\n\n" in text else text


_HEADER_LINE = re.compile(r"^[A-Z][A-Za-z]*: \S")  # a field as `mail_document` writes it


def _labels(header: str) -> list[str]:
    """A message's Gmail labels as Gmail shows them, from Takeout's ``X-Gmail-Labels`` (which quotes a label with a
    comma) or an IMAP copy's (``"\\\\Sent"``).

    Example:
        >>> _labels('Inbox,"Clients, 2024",Category  Updates'), _labels('"\\\\Sent"'), _labels("")
        (['Inbox', 'Clients, 2024', 'Category Updates'], ['Sent'], [])
    """
    fields = next(csv.reader([header], skipinitialspace=True), [])
    return [label for label in (" ".join(field.lstrip("\\").split()) for field in fields) if label]


def _messages(path: Path) -> Iterator[tuple[int, EmailMessage | None]]:
    """(number from 1, the parsed message, or None when it cannot be parsed as an e-mail) of the mailbox, with a bar
    over them when the build shows progress."""
    import mailbox

    box = mailbox.mbox(path, create=False)
    try:
        keys = box.keys()  # one pass over the file to find the messages' "From " lines
        bar = part_bar(len(keys), path.name[:30], "message", least=50)
        for number, key in enumerate(keys, 1):
            try:
                message = parse_email(_FROM_QUOTE.sub(rb"\1", box.get_bytes(key)))
            except Exception:  # noqa: BLE001 - one malformed message of a user's mailbox: the others are read
                message = None
            yield number, message if message is not None and is_email(message) else None
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    finally:
        box.close()
