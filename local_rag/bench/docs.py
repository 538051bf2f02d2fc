"""Document readers measured on real files (``scripts/bench_docs.py``): local-rag's readers (pypdf, python-docx,
python-pptx, trafilatura)
against markitdown, for text quality, pages a second and what each keeps (pages, headings).

    python scripts/bench_docs.py FOLDER [--markitdown /path/to/venv/bin/python] [--json out.json]

markitdown runs in its own virtual environment (``python -m venv V && V/bin/pip install 'markitdown[pdf,docx,pptx]'``)
so that its dependencies stay out of local-rag's. Quality signals, per 1,000 words of extracted text:
- ``glued``: tokens of 25+ letters, i.e. words run together when the spaces of a PDF line were lost;
- ``broken``: words cut at a line-end hyphen and left cut (``ex- ploring``);
- ``pipes``: table cell bars, i.e. running text laid out as a table;
- ``nav``: words of site navigation kept from HTML pages (boilerplate).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import time
from pathlib import Path

from local_rag.corpus.documents import DOC_SUFFIXES, UnreadableFile, read_document

_MARKITDOWN = """
import json, sys, time
from markitdown import MarkItDown
md = MarkItDown()
out = {}
for path in sys.argv[1:]:
    started = time.perf_counter()
    try:
        text = md.convert(path).text_content
    except Exception as exc:
        text = ""
    out[path] = {"text": text, "seconds": time.perf_counter() - started}
print(json.dumps(out))
"""
_NAV = re.compile(r"\b(navigation|previous topic|next topic|quick search|table of contents|show source|index\s*\|)", re.I)


def quality(text: str) -> dict[str, float]:
    words = text.split()
    per_k = 1000 / max(len(words), 1)
    return {
        "words": len(words),
        "glued": round(sum(1 for w in words if re.fullmatch(r"[A-Za-z]{25,}[.,;:]?", w)) * per_k, 2),
        "broken": round(len(re.findall(r"[a-z]- [a-z]", text)) * per_k, 2),
        "pipes": round(text.count("|") * per_k, 1),
        "nav": len(_NAV.findall(text)),
    }


def ours(path: Path) -> dict[str, object]:
    started = time.perf_counter()
    try:
        document = read_document(path)
    except UnreadableFile as exc:
        return {"error": str(exc), "seconds": time.perf_counter() - started, "pages": 0}
    seconds = time.perf_counter() - started
    text = "\n".join(s.text for s in document.sections)
    headings = sum(len(s.headings) for s in document.sections)
    pages = document.pages
    return {"seconds": seconds, "pages": pages, "title": document.title, "headings": headings,
            "page_numbers": any(s.page for s in document.sections), **quality(" ".join(text.split("\n")))}


def markitdown(python: str, paths: list[Path]) -> dict[str, dict[str, object]]:
    raw = subprocess.run([python, "-c", _MARKITDOWN, *map(str, paths)], capture_output=True, text=True, check=True)
    out = {}
    for path, result in json.loads(raw.stdout).items():
        text = str(result["text"])
        headings = len(re.findall(r"^#{1,6} ", text, re.M))
        out[path] = {"seconds": result["seconds"], "headings": headings, "page_numbers": "Slide number" in text,
                     **quality(" ".join(text.split("\n")))}
    return out


def run(args: argparse.Namespace) -> None:
    """Run the benchmark with the options parsed by ``scripts/bench_docs.py``."""
    files = sorted(p for p in args.folder.iterdir() if p.suffix.lower() in DOC_SUFFIXES)
    read_document(files[0])  # imports and first-call set-up out of the timings
    rows = {str(p): {"ours": ours(p)} for p in files}
    if args.markitdown:
        subprocess.run([args.markitdown, "-c", _MARKITDOWN, str(files[0])], capture_output=True, check=True)
        for path, result in markitdown(args.markitdown, files).items():
            rows[path]["markitdown"] = result
    cols = ("words", "glued", "broken", "pipes", "nav", "headings", "page_numbers")
    print("| file | reader | pages | pages/s | " + " | ".join(cols) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(cols))
    totals: dict[str, dict[str, list[float]]] = {}
    for path, by_reader in rows.items():
        pages = int(by_reader["ours"].get("pages") or 1)  # type: ignore[call-overload]
        for reader, r in by_reader.items():
            seconds = float(r["seconds"])  # type: ignore[arg-type]
            fmt = Path(path).suffix.lower().lstrip(".")
            tot = totals.setdefault(f"{reader} {fmt}", {"pages": [], "seconds": []})
            tot["pages"].append(pages)
            tot["seconds"].append(seconds)
            if "error" in r:
                print(f"| {Path(path).name} | {reader} | error: {r['error']} |")
                continue
            print(f"| {Path(path).name} | {reader} | {pages} | {pages / seconds:.1f} | "
                  + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    print()
    for key, tot in sorted(totals.items()):
        print(f"{key}: {sum(tot['pages']):.0f} pages in {sum(tot['seconds']):.2f}s = "
              f"{sum(tot['pages']) / sum(tot['seconds']):.1f} pages/s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")

