"""Document readers measured on real files: local-rag's readers (pypdf, python-docx, python-pptx, trafilatura)
against markitdown, for text quality, pages a second and what each keeps (pages, headings).

    python scripts/bench_docs.py FOLDER [--markitdown /path/to/venv/bin/python] [--json out.json]

The folder measured in docs/benchmarks.md (real files nobody here wrote; DOCX and PPTX made from them by LibreOffice):

    mkdir -p /tmp/i28/real && cd /tmp/i28/real
    cp ../shared/mtrag/mtragun-dev/MTRAG-UN-arxiv.pdf /usr/share/doc/libtasn1-doc/libtasn1.pdf \
       /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf /usr/share/doc/python3/python-policy.html \
       /usr/share/doc/zlib1g-dev/examples/zlib_how.html /usr/share/doc/base-passwd/users-and-groups.html .
    soffice --headless --convert-to 'docx:MS Word 2007 XML' python-policy.html zlib_how.html
    soffice --headless --infilter=impress_pdf_import --convert-to pptx shared-mime-info-spec.pdf MTRAG-UN-arxiv.pdf

markitdown runs in its own virtual environment; the quality signals are described in ``local_rag/bench/docs.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.docs import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--markitdown", help="python of a venv with markitdown installed")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()
