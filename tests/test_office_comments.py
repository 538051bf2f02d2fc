"""Review comments in Office files beyond Word's: on spreadsheet cells (`local_rag.corpus.workbook_comments`,
`office._ods_rows`): an Excel workbook's notes as openpyxl writes them (Excel's own format for a note), Excel 365's
threaded comments with their replies (the parts Excel writes: the thread, its people, and the note it keeps for older
readers), a LibreOffice Calc comment, whose words ran into its cell's value before; and on PowerPoint slides
(`local_rag.corpus.slide_comments`), in both of PowerPoint's formats."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from local_rag.corpus.documents import read_document

THREAD_NOTE = ("[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment; however, any "
               "edits to it will get removed if the file is opened in a newer version of Excel. Learn more: "
               "https://go.microsoft.com/fwlink/?linkid=870924\n\nComment:\n    {text}\nReply:\n    {reply}")
THREAD_ID, REPLY_ID = "{2BD0B1A4-7C3E-4F2A-9D11-6A5E8C0F1B23}", "{7A0C9E21-5D4B-4C3A-8F19-2E6D1B0A9C47}"
ALICE, BOB = "{5C8E0A1F-3B2D-4E6F-9A7C-1D0B8E2F4A63}", "{0E4F6A2C-8B1D-4D3E-A5F7-9C2B6E1D0A58}"


def _workbook(path: Path) -> Path:
    """A budget workbook with Excel notes on two sheets (one hidden), written by openpyxl."""
    openpyxl = pytest.importorskip("openpyxl")
    from openpyxl.comments import Comment

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    for row in (["item", "Q3"], ["rent", 1200], ["refunds", 1250]):
        sheet.append(row)
    sheet["B3"].comment = Comment("Ana Silva:\nincludes the one-off refund to Harbour Ltd", "Ana Silva")
    sheet["A2"].comment = Comment("renegotiated in July", "Ben Okafor")
    hidden = book.create_sheet("Margins")
    hidden["A1"] = "secret"
    hidden["A1"].comment = Comment("do not share", "Ana Silva")
    hidden.sheet_state = "hidden"
    book.save(path)
    return path


def test_the_notes_on_an_excel_workbooks_cells_are_read_with_their_sheet(tmp_path: Path):
    """Notes were never read: openpyxl's read-only mode, which reads the cells, leaves them out. Each is now a line
    after its sheet's rows, with its author (Excel's "Ana Silva:" that opens a note not repeated), its cell and the
    cell's value; a hidden sheet's notes stay out with the sheet."""
    document = read_document(_workbook(tmp_path / "budget.xlsx"))
    assert [(s.heading, s.text) for s in document.sections] == [("Budget", "\n".join([
        "item: rent; Q3: 1200", "item: refunds; Q3: 1250",
        "Comment (Ben Okafor) on A2 “rent”: renegotiated in July",
        "Comment (Ana Silva) on B3 “1250”: includes the one-off refund to Harbour Ltd"]))]


def _with_thread(source: Path, target: Path, threaded: bool = True) -> Path:
    """``source`` with an Excel 365 thread on Budget!B2 (Alice Smith's comment, Bob Lee's reply) as Excel saves one:
    the thread's part and its people (``threaded``), and always the note Excel keeps beside it for older readers,
    whose author is the thread's id."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == "xl/comments/comment1.xml":
                note = THREAD_NOTE.format(text="Check this total", reply="@Alice Smith fixed, see row 3")
                data = data.replace(b"</authors>", f"<author>tc={THREAD_ID}</author></authors>".encode())
                data = data.replace(b"</commentList>", (
                    f'<comment ref="B2" authorId="2" shapeId="0"><text><t xml:space="preserve">{note}</t></text>'
                    "</comment></commentList>").encode())
            if threaded and item.filename == "xl/worksheets/_rels/sheet1.xml.rels":
                data = data.replace(b"</Relationships>", (
                    b'<Relationship Id="rIdT1" Type="http://schemas.microsoft.com/office/2017/10/relationships/'
                    b'threadedComment" Target="../threadedComments/threadedComment1.xml"/></Relationships>'))
            if threaded and item.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(b"</Relationships>", (
                    b'<Relationship Id="rIdP1" Type="http://schemas.microsoft.com/office/2017/10/relationships/person"'
                    b' Target="persons/person.xml"/></Relationships>'))
            new.writestr(item, data)
        if threaded:
            ns = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
            new.writestr("xl/threadedComments/threadedComment1.xml", (
                f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<ThreadedComments xmlns="{ns}" '
                'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                f'<threadedComment ref="B2" dT="2026-11-30T09:14:07.21" personId="{ALICE}" id="{THREAD_ID}">'
                "<text>Check this total</text></threadedComment>"
                f'<threadedComment ref="B2" dT="2026-11-30T10:02:51.87" personId="{BOB}" id="{REPLY_ID}" '
                f'parentId="{THREAD_ID}"><text>@Alice Smith fixed, see row 3</text></threadedComment>'
                "</ThreadedComments>"))
            new.writestr("xl/persons/person.xml", (
                f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<personList xmlns="{ns}" '
                'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                f'<person displayName="Alice Smith" id="{ALICE}" userId="alice@example.org" providerId="None"/>'
                f'<person displayName="Bob Lee" id="{BOB}" userId="bob@example.org" providerId="None"/>'
                "</personList>"))
    return target


def test_a_threaded_comment_is_read_once_with_its_people_and_replies(tmp_path: Path):
    """Excel 365 keeps a thread twice: in its own part (names, replies) and as a note for older readers ("[Threaded
    comment] Your version of Excel allows you to read ..."). The thread is read once, from its part; a file whose
    thread part is gone (saved by an older tool) gives the note's text and reply without the boilerplate."""
    source = _workbook(tmp_path / "budget.xlsx")
    document = read_document(_with_thread(source, tmp_path / "thread.xlsx"))
    lines = document.sections[0].text.splitlines()
    assert lines[2:] == ["Comment (Ben Okafor) on A2 “rent”: renegotiated in July",
                         "Comment (Ana Silva) on B3 “1250”: includes the one-off refund to Harbour Ltd",
                         "Comment (Alice Smith) on B2 “1200”: Check this total",
                         "Comment (Bob Lee) on B2 “1200”: @Alice Smith fixed, see row 3"]
    document = read_document(_with_thread(source, tmp_path / "note.xlsx", threaded=False))
    lines = document.sections[0].text.splitlines()
    assert lines[4:] == ["Comment on B2 “1200”: Check this total", "Comment on B2 “1200”: @Alice Smith fixed, see row 3"]
    assert "Your version of Excel" not in document.sections[0].text


def test_damaged_comment_parts_cost_the_comments_not_the_cells(tmp_path: Path):
    """A comments part that is not XML: the sheet's cells are read as before, without its comments."""
    source = _workbook(tmp_path / "budget.xlsx")
    broken = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(broken, "w") as new:
        for item in old.infolist():
            new.writestr(item, b"<comments><oops" if item.filename == "xl/comments/comment1.xml" else
                         old.read(item.filename))
    document = read_document(broken)
    assert document.sections[0].text == "item: rent; Q3: 1200\nitem: refunds; Q3: 1250"


ODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.3"><office:body><office:spreadsheet>
<table:table table:name="Stock">
  <table:table-row><table:table-cell office:value-type="string"><text:p>item</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>count</text:p></table:table-cell></table:table-row>
  <table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="2"/></table:table-row>
  <table:table-row><table:table-cell office:value-type="string"><text:p>sandbags</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="400"><office:annotation><dc:creator>Ana Silva</dc:creator><dc:date>2026-11-30T00:00:00</dc:date><text:p>counted on Monday,</text:p><text:p>two pallets damp</text:p></office:annotation><text:p>400</text:p></table:table-cell></table:table-row>
  <table:table-row table:number-rows-repeated="1048571"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>
</table:table>
</office:spreadsheet></office:body></office:document-content>"""


def test_a_calc_comment_is_read_apart_from_its_cells_value(tmp_path: Path):
    """LibreOffice Calc keeps a cell's comment inside the cell: its words were read into the value ("counted on
    Monday, two pallets damp 400"). The value is read alone, the comment after the rows, at its cell (rows counted
    across Calc's repeated empty rows)."""
    path = tmp_path / "depot.ods"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        package.writestr("content.xml", ODS)
    document = read_document(path)
    assert [(s.heading, s.text) for s in document.sections] == [("Stock", "item: sandbags; count: 400\n"
                                                                 "Comment (Ana Silva) on B4 “400”: counted on Monday, "
                                                                 "two pallets damp")]


PPT_COMMENT = "application/vnd.openxmlformats-officedocument.presentationml.comments+xml"
PPT_AUTHORS = "application/vnd.openxmlformats-officedocument.presentationml.commentAuthors+xml"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
P188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _deck(path: Path) -> Path:
    """A two-slide deck written by python-pptx, then the comment parts PowerPoint writes added to it: slide 1 with a
    PowerPoint 2007-2019 comment (``commentAuthors.xml``, ``comments/comment1.xml``), slide 2 with a Microsoft 365
    thread and its reply (``authors.xml``, ``comments/modernComment_101_0.xml``)."""
    pptx = pytest.importorskip("pptx")
    deck = pptx.Presentation()
    for title, body in (("Flood plan", "Sandbags at the depot"), ("Budget", "Pumps 1,200")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    plain = path.with_suffix(".plain.pptx")
    deck.save(plain)
    legacy = (f'<p:cmLst xmlns:p="{P}"><p:cm authorId="0" dt="2026-11-30T09:14:07.210" idx="1"><p:pos x="10" y="10"/>'
              "<p:text>Add the depot's opening hours</p:text></p:cm></p:cmLst>")
    modern = (f'<p188:cmLst xmlns:a="{A}" xmlns:r="{RELS}" xmlns:p188="{P188}">'
              f'<p188:cm id="{{C1}}" authorId="{ALICE}" created="2026-11-30T10:00:00.000"><p188:pos x="10" y="10"/>'
              f'<p188:replyLst><p188:reply id="{{R1}}" authorId="{BOB}" created="2026-11-30T11:00:00.000">'
              "<p188:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:t>Quote from October</a:t></a:r></a:p></p188:txBody>"
              "</p188:reply></p188:replyLst><p188:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:t>Which supplier</a:t>"
              "</a:r><a:r><a:t>'s price?</a:t></a:r></a:p><a:p><a:r><a:t>Two quotes differ.</a:t></a:r></a:p>"
              "</p188:txBody></p188:cm></p188:cmLst>")
    parts = {
        "ppt/commentAuthors.xml": f'<p:cmAuthorLst xmlns:p="{P}"><p:cmAuthor id="0" name="Ana Silva" initials="AS" '
                                  'lastIdx="1" clrIdx="0"/></p:cmAuthorLst>',
        "ppt/authors.xml": f'<p188:authorLst xmlns:p188="{P188}"><p188:author id="{ALICE}" name="Alice Smith" '
                           f'initials="AS" userId="alice@example.org" providerId="None"/><p188:author id="{BOB}" '
                           'name="Bob Lee" initials="BL" userId="bob@example.org" providerId="None"/></p188:authorLst>',
        "ppt/comments/comment1.xml": legacy,
        "ppt/comments/modernComment_101_0.xml": modern,
    }
    rels = {
        "ppt/_rels/presentation.xml.rels": f'<Relationship Id="rIdA1" Type="{RELS}/commentAuthors" '
        'Target="commentAuthors.xml"/><Relationship Id="rIdA2" Type="http://schemas.microsoft.com/office/2018/10/'
        'relationships/authors" Target="authors.xml"/>',
        "ppt/slides/_rels/slide1.xml.rels": f'<Relationship Id="rIdC1" Type="{RELS}/comments" '
        'Target="../comments/comment1.xml"/>',
        "ppt/slides/_rels/slide2.xml.rels": '<Relationship Id="rIdC2" Type="http://schemas.microsoft.com/office/2018/'
        '10/relationships/comments" Target="../comments/modernComment_101_0.xml"/>',
    }
    types = (f'<Override PartName="/ppt/commentAuthors.xml" ContentType="{PPT_AUTHORS}"/>'
             '<Override PartName="/ppt/authors.xml" ContentType="application/vnd.ms-powerpoint.authors+xml"/>'
             f'<Override PartName="/ppt/comments/comment1.xml" ContentType="{PPT_COMMENT}"/>'
             '<Override PartName="/ppt/comments/modernComment_101_0.xml" '
             'ContentType="application/vnd.ms-powerpoint.comments+xml"/>')
    with zipfile.ZipFile(plain) as old, zipfile.ZipFile(path, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename in rels:
                data = data.replace(b"</Relationships>", rels[item.filename].encode() + b"</Relationships>")
            if item.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", types.encode() + b"</Types>")
            new.writestr(item, data)
        for name, text in parts.items():
            new.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n' + text)
    return path


def test_the_review_comments_on_a_presentations_slides_are_read(tmp_path: Path):
    """PowerPoint's review comments were never read (python-pptx has no API for them): each is now a line after its
    slide's text, with its author, a Microsoft 365 thread's reply after its comment."""
    document = read_document(_deck(tmp_path / "plan.pptx"))
    assert [(s.heading, s.text) for s in document.sections] == [
        ("Flood plan", "Flood plan\nSandbags at the depot\nComment (Ana Silva): Add the depot's opening hours"),
        ("Budget", "Budget\nPumps 1,200\nComment (Alice Smith): Which supplier's price? Two quotes differ.\n"
                   "Comment (Bob Lee): Quote from October")]


def test_a_damaged_slide_comments_part_costs_its_comments_not_the_slides(tmp_path: Path):
    deck = _deck(tmp_path / "plan.pptx")
    broken = tmp_path / "broken.pptx"
    with zipfile.ZipFile(deck) as old, zipfile.ZipFile(broken, "w") as new:
        for item in old.infolist():
            new.writestr(item, b"<p:cmLst" if item.filename == "ppt/comments/comment1.xml" else old.read(item.filename))
    sections = read_document(broken).sections
    assert sections[0].text == "Flood plan\nSandbags at the depot" and "Comment (Bob Lee)" in sections[1].text
