"""Real document files made with the libraries that read them (python-docx, python-pptx, pypdf) and fpdf2 for PDFs
with a text layer: nothing hand-written in a format's bytes, except the corrupt PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

for module in ("pypdf", "docx", "pptx", "trafilatura", "fpdf"):
    pytest.importorskip(module)


def make_pdf(path: Path, pages: list[str], title: str = "") -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))
    return path


def make_image_pdf(path: Path, lines: tuple[str, ...] = (), text_pages: tuple[str, ...] = ()) -> Path:
    """A 'scanned' PDF: ``text_pages`` with a text layer (fpdf2), then one page holding only a picture, no text layer:
    of ``lines`` (printed in 40-pixel letters, legible to OCR) or, with none, of shapes (a photo with no words)."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1200, 120 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    for i, line in enumerate(lines):
        draw.text((40, 60 + 70 * i), line, fill="black", font=font)
    if not lines:
        draw.ellipse((100, 20, 300, 100), outline="black", width=6)
        draw.rectangle((500, 30, 900, 90), fill="gray")
    picture = path.with_suffix(".png")
    image.save(picture)
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in text_pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.add_page()
    pdf.image(str(picture), x=10, y=10, w=180)
    pdf.output(str(path))
    picture.unlink()
    return path


def make_stamped_scan(path: Path, lines: tuple[str, ...], stamps: tuple[str, ...], body: str = "") -> Path:
    """A legal production: one page a stamp, each an A4 scan (a full-page picture of ``lines``) with its Bates number
    (``stamps``) as text at its foot, as production tools stamp them; with ``body``, a last page as a slide exported
    to PDF: a full-page picture behind that text in the body of the page."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    scan = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(scan)
    for i, line in enumerate(lines):
        draw.text((100, 150 + 80 * i), line, fill=0, font=ImageFont.load_default(size=36))
    picture = path.with_suffix(".png")
    scan.save(picture)
    backdrop = path.with_name(path.stem + "-backdrop.png")
    Image.new("RGB", (1240, 1754), (40, 90, 160)).save(backdrop)
    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.set_font("helvetica", size=9)
    for stamp in stamps:
        pdf.add_page()
        pdf.image(str(picture), x=0, y=0, w=210, h=297)
        pdf.set_xy(140, 287)
        pdf.cell(60, 5, stamp)
    if body:
        pdf.add_page()
        pdf.image(str(backdrop), x=0, y=0, w=210, h=297)
        pdf.set_xy(30, 120)
        pdf.multi_cell(150, 8, body)
    pdf.output(str(path))
    picture.unlink()
    backdrop.unlink()
    return path


def make_encrypted_pdf(path: Path, source: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(str(source)))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def make_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Quarterly Operations Review"
    document.add_heading("Warehouse capacity", level=1)
    document.add_paragraph("The northern warehouse stores pallets of solar panels.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Site", "Pallets"
    table.cell(1, 0).text, table.cell(1, 1).text = "Oslo", "1200"
    document.add_heading("Staffing", level=2)
    document.add_paragraph("Night shifts were reduced in March.")
    document.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    import pptx

    presentation = pptx.Presentation()
    for title, body in (("Roadmap", "Ship the offline installer in May."), ("Risks", "Model downloads blocked by proxies.")):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    presentation.save(str(path))
    return path


HTML_PAGE = """<!DOCTYPE html><html><head><title>Glacier Field Guide</title><script>var tracking = 1;</script></head>
<body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li><li><a href="/login">Log in</a></li></ul></nav>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
<article>
<h1>Glacier Field Guide</h1>
<p>Glaciers form where the accumulation of snow exceeds its ablation over many years, compacting into ice.</p>
<h2>Moraines</h2>
<p>A moraine is an accumulation of unconsolidated debris that a glacier has pushed or carried and left behind.</p>
<p>Lateral moraines run along the sides of the glacier, while terminal moraines mark its furthest advance.</p>
</article>
<footer>Copyright 2024 Example Corp. All rights reserved. Privacy policy. Terms of use.</footer>
</body></html>"""


def make_folder(folder: Path) -> Path:
    """One readable file of each format."""
    folder.mkdir(parents=True, exist_ok=True)
    make_pdf(folder / "report.pdf", [
        "Annual report\n1 Introduction\nThe cooperative grew barley on forty hectares.",
        "2 Results\nThe harvest reached nine tonnes of barley per hectare in the second year.",
    ], title="Annual report")
    make_docx(folder / "review.docx")
    make_pptx(folder / "plan.pptx")
    (folder / "guide.html").write_text(HTML_PAGE, encoding="utf-8")
    (folder / "notes.md").write_text("# Field notes\n\nIntro line.\n\n## Sampling\n\nWe sampled lake water weekly.\n")
    (folder / "0f3a9c2be4d1a7.txt").write_text("Tidal energy primer\n\nTidal turbines turn with the flow of the tide.\n")
    return folder
