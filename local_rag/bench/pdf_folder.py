"""The README's first-run figure for a folder of PDFs (``scripts/bench_pdf_folder.py``): makes ``--files``
multi-page PDFs, then times ``local-rag index build FOLDER --index NAME`` on them as a user runs it (a fresh process,
the default profile unless ``--profile``): wall time, peak RSS of the process, load average before and after.

    python scripts/bench_pdf_folder.py --dest /tmp/i28/pdf100 --index i28-pdf100 --out docs/benchmarks/i28-pdf100.json

The PDFs: IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (``local_rag.bench.headers.pages``), the
first ``--files`` by document id, one PDF each, written with fpdf2 (the library the tests make PDFs with): the page's
first line as the PDF title and a bold heading, its short lines as bold section headings, the rest as 11 pt body
text on A4, which gives 1 to 15 pages a file. Nothing of the pool is written outside ``--dest``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.bench import headers as bench_headers


def _latin1(text: str) -> str:
    """fpdf2's core fonts hold Latin-1 only: other characters become the nearest ASCII or '?'."""
    swaps = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u2026": "..."}
    text = "".join(swaps.get(c, c) for c in text)
    return text.encode("latin-1", "replace").decode("latin-1")


def _blocks(page: str) -> list[tuple[str, str]]:
    """(kind, text) blocks of a page: its short lines without a final stop are headings, the rest paragraphs."""
    out = []
    for block in page.split("\n\n"):
        text = " ".join(block.split())
        if not text:
            continue
        heading = len(text) < 90 and not text.endswith((".", ":", ";", ","))
        out.append(("heading" if heading else "text", _latin1(text)))
    return out


def make_pdf(path: Path, page: str) -> int:
    """Write one page of documentation as a PDF; return its page count."""
    fpdf = require("fpdf", "making the benchmark's PDFs")
    blocks = _blocks(page)
    title = blocks[0][1] if blocks else path.stem
    pdf = fpdf.FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_page()
    pdf.set_font("helvetica", "B", 16)
    pdf.multi_cell(0, 8, title)
    for kind, text in blocks[1:]:
        pdf.ln(2)
        if kind == "heading":
            pdf.set_font("helvetica", "B", 12)
            pdf.multi_cell(0, 6, text)
        else:
            pdf.set_font("helvetica", "", 11)
            pdf.multi_cell(0, 5.5, text)
    pdf.output(str(path))
    return int(pdf.page_no())


def make_folder(dest: Path, files: int) -> dict[str, int]:
    """Write ``files`` PDFs into ``dest`` (made empty first); return their counts."""
    pages = bench_headers.pages(bench_headers.MTRAG / "corpora" / "pool" / "cloud.jsonl")
    chosen = sorted(pages)[:files]
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.pdf"):
        old.unlink()
    pdf_pages = words = 0
    for doc in chosen:
        pdf_pages += make_pdf(dest / f"{doc}.pdf", pages[doc])
        words += len(pages[doc].split())
    size = sum(p.stat().st_size for p in dest.glob("*.pdf"))
    return {"files": len(chosen), "pdf_pages": pdf_pages, "words": words, "bytes": size}


def time_build(folder: Path, index: str, profile: str | None) -> dict[str, Any]:
    """Run ``local-rag index build`` in a fresh process; its wall time, peak RSS and the load around it."""
    command = [sys.executable, "-m", "local_rag", "index", "build", str(folder), "--index", index]
    if profile:
        command += ["--profile", profile]
    load_before = os.getloadavg()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    load_after = os.getloadavg()
    if done.returncode != 0:
        raise SystemExit(f"index build failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return {
        "command": "local-rag " + " ".join(command[3:]),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "stdout_tail": done.stdout.strip().splitlines()[-5:],
    }


def run(args: argparse.Namespace) -> None:
    """Run the benchmark with the options parsed by ``scripts/bench_pdf_folder.py``."""
    started = time.perf_counter()
    out: dict[str, Any] = {"folder": make_folder(args.dest, args.files)}
    out["folder"]["make_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out), flush=True)
    if args.index:
        out["build"] = time_build(args.dest, args.index, args.profile)
        out["profile"] = args.profile or "default"
        out["machine"] = {"cpus": os.cpu_count(), "uname": " ".join(os.uname()[2:5])}
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
