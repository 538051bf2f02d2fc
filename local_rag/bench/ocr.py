"""Scanned PDFs read by OCR (``scripts/bench_ocr.py``): how fast, and how much of the text comes back.

    python scripts/bench_ocr.py --files 8 --out docs/benchmarks/s54-ocr.json

The PDFs: the first ``--files`` IBM Cloud documentation pages of the MTRAG cloud pool written as PDFs with a text
layer (`local_rag.bench.pdf_folder.make_pdf`: 11 pt body text on A4), then "scanned": each page rendered to a gray
image at 300 dpi with the noise and the slight skew of a sheet fed through a scanner, and saved as an image-only PDF,
as a scanner writes it. Each scan is read by `local_rag.corpus.ocr.page_texts` at each ``--dpi``; its words are
compared with the text layer of the PDF it was made from (pypdf): recall (the share of the original's words read, in
order: `difflib`'s matching blocks) and precision (the share of the words read that are the original's). The cells:
the shipped settings at each ``--dpi``, then each of `local_rag.corpus.ocr.OcrOptions` set back to RapidOCR's default
(`cell_settings`), then the same pages as JPEG pictures (`pictures`) read as `--images` reads them.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.bench import headers as bench_headers
from local_rag.bench.environment import describe_machine
from local_rag.bench.pdf_folder import make_pdf

SCAN_DPI = 300
_WORD = re.compile(r"[a-z0-9]+")


def scan(source: Path, dest: Path, dpi: int = SCAN_DPI, noise: float = 10.0, skew: float = 0.4, seed: int = 0,
         turn: int = 0) -> int:
    """Write ``dest``: the pages of the PDF ``source`` as gray images (``noise``: the standard deviation of the
    pixel noise; ``skew``: degrees of rotation, alternating in sign; ``turn``: each page turned this many degrees
    anticlockwise, as a sheet fed upside down or sideways), in an image-only PDF. Returns the pages."""
    pdfium = require("pypdfium2", "making scanned PDFs")
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = []
    document = pdfium.PdfDocument(str(source))
    try:
        for number in range(len(document)):
            page = document[number]
            gray = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
            page.close()
            if skew:
                gray = gray.rotate(skew if number % 2 == 0 else -skew, fillcolor=255, resample=Image.Resampling.BICUBIC)
            if turn:
                gray = gray.rotate(turn, expand=True, fillcolor=255)
            if noise:
                pixels = np.asarray(gray, dtype=np.float32) + rng.normal(0, noise, (gray.height, gray.width))
                gray = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
            images.append(gray)
    finally:
        document.close()
    images[0].save(dest, save_all=True, append_images=images[1:], resolution=float(dpi))
    return len(images)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def agreement(reference: str, read: str) -> tuple[float, float]:
    """(recall, precision) of the words ``read`` against the ``reference``, matched in order.

    Example:
        >>> agreement("The pump failed on 12 March.", "The pump fai1ed on 12 March")
        (0.8333333333333334, 0.8333333333333334)
    """
    ref, got = words(reference), words(read)
    if not ref or not got:
        return 0.0, 0.0
    matched = sum(b.size for b in difflib.SequenceMatcher(None, ref, got, autojunk=False).get_matching_blocks())
    return matched / len(ref), matched / len(got)


def _tick(ticks: list[float]) -> None:
    ticks.append(time.perf_counter())


def cell_settings(dpis: list[int]) -> list[tuple[str, int, Any]]:
    """The cells measured: the shipped settings at each of ``dpis``, then at `ocr.DPI` each choice of
    `ocr.OcrOptions` turned back to RapidOCR's own default, one at a time."""
    from local_rag.corpus import ocr

    shipped = ocr.OcrOptions()
    cells: list[tuple[str, int, Any]] = [(f"shipped, {dpi} dpi", dpi, shipped) for dpi in dpis]
    return cells + [
        ("RapidOCR's 2,000-pixel limit", ocr.DPI, dataclasses.replace(shipped, max_side=2000)),
        ("with the line classifier", ocr.DPI, dataclasses.replace(shipped, line_classifier=True)),
        ("6 lines a batch", ocr.DPI, dataclasses.replace(shipped, line_batch=6)),
        ("smoothed 1 px", ocr.DPI, dataclasses.replace(shipped, smooth=1.0)),
    ]


def pictures(made: list[tuple[str, Path, int, list[str]]], dest: Path, quality: int = 75) -> list[tuple[Path, str]]:
    """Each scanned page as a picture a user would have instead of a PDF: rendered at `ocr.DPI` and saved as a JPEG
    of ``quality`` (Pillow's default, and a common scanner setting); with the text it was made from."""
    pdfium = require("pypdfium2", "making the pictures")
    from local_rag.corpus import ocr

    out = []
    for doc, scanned, count, reference in made:
        document = pdfium.PdfDocument(str(scanned))
        for number in range(1, count + 1):
            page = document[number - 1]
            path = dest / f"{doc}.p{number}.jpg"
            page.render(scale=ocr.DPI / 72, grayscale=True).to_pil().convert("L").save(path, quality=quality)
            page.close()
            out.append((path, reference[number - 1]))
        document.close()
    return out


def _summary(label: str, dpi: int, options: Any, seconds: list[float], recall: list[float],
             precision: list[float]) -> dict[str, Any]:
    cell = {"cell": label, "dpi": dpi, **dataclasses.asdict(options), "pages": len(seconds),
            "s_per_page_p50": round(statistics.median(seconds), 3), "s_per_page_max": round(max(seconds), 3),
            "pages_per_minute": round(60 * len(seconds) / sum(seconds), 1),
            "word_recall": round(statistics.fmean(recall), 4), "word_recall_min": round(min(recall), 4),
            "word_precision": round(statistics.fmean(precision), 4)}
    print(json.dumps(cell), flush=True)
    return cell


def _pdf_cell(label: str, dpi: int, options: Any, made: list[tuple[str, Path, int, list[str]]]) -> dict[str, Any]:
    """Every page of the scans ``made`` read by `ocr.page_texts`: seconds a page, word recall and precision."""
    from local_rag.corpus import ocr

    ocr.page_texts(made[0][1], [1], dpi=dpi, options=options)  # the models load before any timing
    seconds: list[float] = []
    recall: list[float] = []
    precision: list[float] = []
    for _doc, scanned, count, reference in made:
        ticks = [time.perf_counter()]
        texts, _lost = ocr.page_texts(scanned, list(range(1, count + 1)), dpi=dpi, options=options,
                                      on_page=functools.partial(_tick, ticks))
        seconds += [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
        for number, text in texts.items():
            r, p = agreement(reference[number - 1], text)
            recall.append(r)
            precision.append(p)
    return _summary(label, dpi, options, seconds, recall, precision)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The cells of `cell_settings` and the pictures; with ``args.turned``, the shipped settings on the scans as
    made and on the same scans turned upside down and sideways (`scan`'s ``turn``) instead."""
    pypdf = require("pypdf", "reading the PDFs' text layers")
    from local_rag.corpus import ocr

    pages = bench_headers.pages(bench_headers.MTRAG / "corpora" / "pool" / "cloud.jsonl")
    args.dest.mkdir(parents=True, exist_ok=True)
    made = []
    turns = (0, 180, 90) if args.turned else (0,)
    for doc in sorted(pages)[: args.files]:
        source = args.dest / f"{doc}.pdf"
        make_pdf(source, pages[doc])
        reference = [page.extract_text() or "" for page in pypdf.PdfReader(str(source)).pages]
        for turn in turns:
            scanned = args.dest / f"{doc}.scan{turn or ''}.pdf"
            made.append((doc, scanned, scan(source, scanned, turn=turn), reference, turn))
    cells = []
    if args.turned:
        for turn, label in ((0, "upright"), (180, "upside down"), (90, "sideways")):
            cells.append(_pdf_cell(f"shipped, {ocr.DPI} dpi, pages {label}", ocr.DPI, ocr.OcrOptions(),
                                   [m[:4] for m in made if m[4] == turn]))
    else:
        upright = [m[:4] for m in made]
        cells += [_pdf_cell(label, dpi, options, upright) for label, dpi, options in cell_settings(args.dpi)]
        for label, options in (("JPEG pictures, smoothed 1 px", ocr.OcrOptions(smooth=1.0)),
                               ("JPEG pictures, shipped", ocr.OcrOptions())):
            seconds, recall, precision = [], [], []
            for path, truth in pictures(upright, args.dest):
                started = time.perf_counter()
                text = ocr.image_texts(path, options)[1]
                seconds.append(time.perf_counter() - started)
                r, p = agreement(truth, text)
                recall.append(r)
                precision.append(p)
            cells.append(_summary(label, ocr.DPI, options, seconds, recall, precision))
    out = {"command": "python scripts/bench_ocr.py " + " ".join(args.argv), "machine": describe_machine(),
           "files": args.files, "pages": sum(m[2] for m in made if m[4] == 0), "scan_dpi": SCAN_DPI, "cells": cells}
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out
