"""HTML underneath: web pages (trafilatura, the ``docs`` extra), pages saved as one file (``.mht``), EPUB books and
e-mail (``.eml``, Outlook ``.msg`` through `local_rag.corpus.office97`).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.policy import default as default_policy
from email.utils import format_datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from local_rag._optional import require
from local_rag.corpus import office97
from local_rag.corpus.notes import library_notes
from local_rag.corpus.sections import Document, Section, UnreadableFile, decode_text, is_compound, line_feeds


def read_web_archive(path: Path) -> Document:
    """A web page saved as one file (``.mht``/``.mhtml``: a browser's "Save as MHTML", Word's "Single File Web Page"):
    its HTML part read as an ``.html`` file is (`html_text`); its pictures and styles left out."""
    archive = parse_email(path.read_bytes())
    page = next((part for part in archive.walk() if part.get_content_type() == "text/html"), None)
    if page is None:
        raise UnreadableFile("not a web archive (no HTML part)")
    raw = page.get_payload(decode=True)  # Chrome names no charset: the page's bytes are decoded as a .html file's
    if not isinstance(raw, bytes):
        raise UnreadableFile("not a web archive (its HTML part holds no text)")
    charset = page.get_content_charset()
    try:
        html = raw.decode(charset) if charset else decode_text(raw)[0]
    except (LookupError, UnicodeDecodeError):
        html = decode_text(raw)[0]
    title, text, headings = html_text(html)
    subject = " ".join(str(archive.get("subject") or "").split())
    return Document(title or subject or (headings[0][1] if headings else path.stem),
                    [Section(text, headings=headings)])


def read_html(path: Path) -> Document:
    """Main text by trafilatura (navigation, footers and scripts dropped). Its XML output is walked rather than its
    Markdown one, which loses text inside formatted code blocks (measured: half the words of zlib's example page)."""
    html, encoding = decode_text(path.read_bytes())
    title, text, headings = html_text(html)
    return Document(title or (headings[0][1] if headings else path.stem), [Section(text, headings=headings)],
                    encoding=encoding)


def html_text(html: str) -> tuple[str, str, list[tuple[int, str]]]:
    """An HTML page's ``<title>``, main text (paragraphs apart by a blank line) and headings (offset, text)."""
    trafilatura = require("trafilatura", "reading HTML files")
    from xml.etree import ElementTree

    title = ""
    match = re.search(r"<title[^>]*>(.*?)</title\s*>", html, re.IGNORECASE | re.DOTALL)
    if match:
        from html import unescape

        title = " ".join(unescape(match.group(1)).split())
    with library_notes():  # its "discarding data: None" is its choice of no main text (read below), no damage
        xml = trafilatura.extract(html, output_format="xml", include_tables=True, favor_recall=True,
                                  include_comments=False)
    lines: list[str] = []
    headings: list[tuple[int, str]] = []
    offset = 0
    if xml:
        main = ElementTree.fromstring(xml).find("main")
        for element in main if main is not None else []:
            if element.tag == "head":
                text = " ".join("".join(element.itertext()).split()).rstrip("¶").strip()
                if text:
                    headings.append((offset, text))
            elif element.tag == "code":
                text = "".join(element.itertext()).strip("\n")
            elif element.tag == "table":
                text = "\n".join(" | ".join(" ".join("".join(c.itertext()).split()) for c in row) for row in element.iter("row"))
            elif element.tag == "list":
                text = "\n".join("- " + " ".join("".join(i.itertext()).split()) for i in element.iter("item"))
            else:
                text = " ".join("".join(element.itertext()).split())
            for piece in (text, " ".join((element.tail or "").split())):  # the tail: text after the element
                if piece:
                    lines.append(piece)
                    offset += len(piece) + 2
    if not lines:  # trafilatura keeps no main text of a fragment (`<div>...` alone) or an XML feed under .html
        lines = visible_text(html)
    return title, "\n\n".join(lines), headings


def parse_email(data: bytes) -> EmailMessage:
    """An RFC 822 message (an ``.eml``, one message of an ``.mbox``) parsed by the standard library, its headers
    parsed once each (`_OncePolicy`)."""
    from email.parser import BytesParser

    return cast(EmailMessage, BytesParser(policy=_ONCE).parsebytes(data))


class _OncePolicy(EmailPolicy):
    """The standard library's default policy, but a header is parsed once, not at each reading: `email.message`
    reads Content-Type ten times a message (finding its body, its attachments), and parsing headers was 85% of the
    time to read a mailbox (2,000 messages: 7.5 of 8.9 s)."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        return _parsed_header(name, value) if isinstance(value, str) and not hasattr(value, "name") else value


@lru_cache(maxsize=512)
def _parsed_header(name: str, value: str) -> Any:
    return default_policy.header_fetch_parse(name, value)


_ONCE = _OncePolicy()


def email_files(path: Path, limit: int) -> list[tuple[str, bytes]]:
    """(file name, bytes) of an ``.eml``'s attached files of at most ``limit`` bytes (`attached_files`)."""
    return attached_files(parse_email(_message_bytes(path)), limit)


def attached_files(message: EmailMessage, limit: int) -> list[tuple[str, bytes]]:
    """(file name, bytes) of a message's attached files of at most ``limit`` bytes, an attached (forwarded) message
    as its RFC 822 text."""
    files = []
    for part in message.iter_attachments():
        data: object
        if part.get_content_type() == "message/rfc822":  # a forwarded message: its own RFC 822 text
            inner = part.get_content()
            subject = " ".join(str(inner.get("subject") or "").split())
            data, name = bytes(inner), str(part.get_filename() or f"{subject or 'message'}.eml")
        else:
            data, name = part.get_payload(decode=True), str(part.get_filename() or "")
        if name and isinstance(data, bytes) and len(data) <= limit:
            files.append((name, data))
    return files


def read_email(path: Path) -> Document:
    """An e-mail saved as ``.eml`` (Thunderbird, Outlook, Apple Mail): its subject is the title; its sender, date and
    recipients and the names of its attachments open the text, then its plain-text body (its HTML body's text when it
    has no plain one); its attached documents are read by `local_rag.corpus.documents` (`email_files`). Apple Mail's
    own ``.emlx`` (the files of ``~/Library/Mail``) is read so too."""
    message = parse_email(_message_bytes(path))
    if not is_email(message):
        raise UnreadableFile("not an e-mail (no From, Subject, Date or To header)")
    return email_document(message, path.stem)


def _message_bytes(path: Path) -> bytes:
    """The RFC 822 bytes of a saved e-mail: the file's, or those of the message an Apple Mail ``.emlx`` holds (its
    first line counts them; a property list of the message's flags follows).

    Raises:
        UnreadableFile: an ``.emlx`` with no count on its first line.
    """
    data = path.read_bytes()
    if path.suffix.lower() != ".emlx":
        return data
    first, _, rest = data.partition(b"\n")
    if not first.strip().isdigit():
        raise UnreadableFile("not an Apple Mail message (no byte count on its first line)")
    return rest[:int(first)]


def is_email(message: EmailMessage) -> bool:
    """The parsed bytes have one of an e-mail's headers (From, Subject, Date, To)."""
    return any(message.get(h) for h in ("from", "subject", "date", "to"))


def email_document(message: EmailMessage, fallback: str, fields: Iterable[tuple[str, str]] = ()) -> Document:
    """A parsed e-mail as `read_email` reads it (``fallback``: the title when it has no subject), ``fields`` after
    its own header lines."""
    # the attachments' names (as an Outlook .msg's): "the mail with the invoice attached" finds it
    attached = [name for part in message.iter_attachments() if (name := part.get_filename())]
    head = [*((name, str(message.get(name) or "")) for name in ("From", "Date", "To", "Cc")), *fields,
            ("Attachments", ", ".join(attached))]
    part = message.get_body(preferencelist=("plain", "html"))
    try:
        body = part.get_content() if part is not None else ""
    except LookupError:  # a charset Python does not know ("x-unknown"): the bytes as a text file's
        payload = part.get_payload(decode=True) if part is not None else b""
        body = decode_text(payload)[0] if isinstance(payload, bytes) and payload else ""
    html = part is not None and part.get_content_type() == "text/html"
    return mail_document(head, "" if html else body, body if html else "", str(message.get("subject") or ""),
                          fallback)


def read_outlook(path: Path) -> Document:
    """An Outlook ``.msg`` (dragged out of Outlook, or kept by a case or records system), read as an ``.eml`` is:
    subject as title; sender, date, recipients and its attachments' names open the text, then the body (its HTML
    body's text when it has no plain one) (`local_rag.corpus.office97.message`)."""
    if not is_compound(path):  # some mail programs save a plain RFC 822 message under this name; Tcl its catalogues
        if re.search(rb"^(from|subject|date|to):", path.read_bytes()[:4096], re.I | re.M):
            return read_email(path)
        raise UnreadableFile("not an Outlook message (no Outlook compound file, no e-mail headers)")
    try:
        mail = office97.message(path)
    except office97.OldFormat as exc:
        raise UnreadableFile(str(exc)) from exc
    fields = [("From", mail.sender), ("Date", format_datetime(mail.sent) if mail.sent else ""), ("To", mail.to),
              ("Cc", mail.cc), ("Attachments", ", ".join(mail.attachments))]
    return mail_document(fields, mail.body, mail.html, mail.subject, path.stem)


def mail_document(fields: Iterable[tuple[str, str]], plain: str, html: str, subject: str, fallback: str) -> Document:
    """A message as its reader sees it: its header fields a line each ("From: ...", the empty ones left out), a blank
    line, its plain-text body (else its HTML body's text); its subject the title (``fallback`` without one)."""
    head = [f"{name}: {' '.join(value.split())}" for name, value in fields if value]
    body = plain or (html_text(html)[1] if html else "")
    text = "\n".join(head) + "\n\n" + line_feeds(body).strip()
    return Document(" ".join(subject.split()) or fallback, [Section(text.strip())])


def read_epub(path: Path) -> Document:
    """An EPUB book: its chapters in reading order (the package's spine), each read by `chapter_text`, one section
    each, so that a citation names the chapter's heading; the title from the package metadata. A book with DRM
    (``META-INF/encryption.xml``) cannot be read."""
    import posixpath
    from urllib.parse import unquote
    from xml.etree import ElementTree

    with zipfile.ZipFile(path) as book:
        names = set(book.namelist())
        if "META-INF/encryption.xml" in names:
            raise UnreadableFile("EPUB with DRM (encrypted chapters): export an unprotected copy to index it")
        if "META-INF/container.xml" not in names:
            raise UnreadableFile("not an EPUB (no META-INF/container.xml)")
        container = ElementTree.fromstring(book.read("META-INF/container.xml"))
        package = next((e.get("full-path") for e in container.iter() if e.tag.endswith("rootfile")), None)
        if not package or package not in names:
            raise UnreadableFile("not an EPUB (its package file is missing)")
        opf = ElementTree.fromstring(book.read(package))
        items = {e.get("id"): e for e in opf.iter() if e.tag.endswith("}item")}
        title = next((" ".join(e.text.split()) for e in opf.iter() if e.tag.endswith("}title") and e.text), "")
        sections = []
        for ref in (e.get("idref") for e in opf.iter() if e.tag.endswith("}itemref")):
            item = items.get(ref)
            if item is None or "html" not in (item.get("media-type") or "") or "nav" in (item.get("properties") or "").split():
                continue  # not a page, or the table of contents (EPUB 3's nav document): a list of the chapters' titles
            name = posixpath.normpath(posixpath.join(posixpath.dirname(package), unquote(item.get("href") or "")))
            if name not in names:
                continue
            text, headings = chapter_text(decode_text(book.read(name))[0])
            if text.strip():
                sections.append(Section(text, headings=headings))
    return Document(title or path.stem, sections, pages=len(sections))


def visible_text(html: str) -> list[str]:
    """The text of an HTML (or XML) page outside scripts and styles, a line per block, whitespace collapsed: the
    fallback when trafilatura finds no main text (before, such a file was "empty document (no text)").

    Example:
        >>> visible_text("<div>Tides <b>rise</b> twice a day.<script>x()</script></div><p>Moons.</p>")
        ['Tides rise twice a day.', 'Moons.']
    """
    return [text for text, _ in _blocks(html)]


def chapter_text(html: str) -> tuple[str, list[tuple[int, str]]]:
    """An e-book chapter's text (its ``<body>``: a block a paragraph) and its ``<h1>``-``<h6>`` headings (offset,
    text). Trafilatura, made to strip a web page's boilerplate, is not used: a chapter has none, and trafilatura
    merged a short one's heading and paragraphs into one line.

    Example:
        >>> chapter_text("<html><head><title>T</title></head><body><h1>Oil</h1><p>Every spring.</p></body></html>")
        ('Oil\\n\\nEvery spring.', [(0, 'Oil')])
    """
    lines: list[str] = []
    headings: list[tuple[int, str]] = []
    offset = 0
    for text, heading in _blocks(html, body_only=True):
        if heading:
            headings.append((offset, text))
        lines.append(text)
        offset += len(text) + 2
    return "\n\n".join(lines), headings


_HIDDEN_TAGS = frozenset({"script", "style", "noscript", "template"})


_INLINE_TAGS = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q",
                          "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr", "font"})


_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _blocks(html: str, body_only: bool = False) -> list[tuple[str, bool]]:
    """(text, is a heading) of each block of a page outside scripts and styles, whitespace collapsed; a line break
    of the page ends a block too, unless ``body_only`` (a chapter: its ``<body>`` alone, a paragraph one block)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.blocks: list[tuple[str, bool]] = []
            self.parts: list[str] = []
            self.hidden = 0
            self.heading = False

        def flush(self) -> None:
            text = " ".join("".join(self.parts).split())
            if text:
                self.blocks.append((text, self.heading))
            self.parts = []

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.hidden += tag in _HIDDEN_TAGS or (body_only and tag == "head")
            if tag not in _INLINE_TAGS:
                self.flush()
                self.heading = tag in _HEADING_TAGS

        def handle_endtag(self, tag: str) -> None:
            self.hidden -= (tag in _HIDDEN_TAGS or (body_only and tag == "head")) and self.hidden > 0
            if tag not in _INLINE_TAGS:
                self.flush()
                self.heading = False

        def handle_data(self, data: str) -> None:
            if self.hidden:
                return
            if body_only:
                self.parts.append(data)
                return
            first, *rest = data.split("\n")  # a page's line breaks end lines too (`visible_text`, as before)
            self.parts.append(first)
            for piece in rest:
                self.flush()
                self.parts.append(piece)

    parser = Text()
    parser.feed(html)
    parser.close()
    parser.flush()
    return parser.blocks
