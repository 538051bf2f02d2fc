"""``local-rag bench-scale``: how build time, memory, disk, latency, recall and ``index add`` grow with the corpus."""

from __future__ import annotations

from pathlib import Path

import click

from local_rag.cli.main import handle_errors


def _sizes(text: str) -> list[int]:
    """``"10k,100k,1M"`` -> ``[10000, 100000, 1000000]``; a size that is not a count of passages is one line."""
    from local_rag.errors import BadInputError

    out = []
    for item in (t.strip().lower() for t in text.split(",") if t.strip()):
        scale = {"k": 1_000, "m": 1_000_000}.get(item[-1:], 1)
        try:
            size = int(float(item.rstrip("km")) * scale)
        except ValueError:
            size = 0
        if size < 1:
            raise BadInputError(f"--sizes: {item!r} is not a corpus size (a count of passages: 5000, 10k, 1M)")
        out.append(size)
    if not out:
        raise BadInputError("--sizes: no size given")
    return out


@click.command("bench-scale")
@click.option("--sizes", default="10k,100k,1M", show_default=True, help="Corpus sizes in passages, ascending.")
@click.option("--kinds", default="flat,hnsw,ivf-sq8,ivf-pq,bm25,hybrid,folder,chunks", show_default=True,
              help="Cells per size: flat, hnsw, ivf-sq8, ivf-pq, bm25, hybrid (BM25 + ANN + RRF), folder (index add), "
                   "chunks (the chunk list: offsets against parsed), qdrant (the embedded Qdrant backend beside the local "
                   "one; not in the default).")
@click.option("--work", default="~/.cache/local-rag/scale", show_default=True,
              help="Cache of the embedded basis, the built indexes and one JSON result per cell (resumable).")
@click.option("--profile", default="cpu-test", show_default=True, help="Profile whose embedder makes the basis.")
@click.option("--basis", type=click.IntRange(min=1), default=4000, show_default=True, help="Pool passages embedded for the basis.")
@click.option("--report-only", is_flag=True, help="Only write the tables and charts from the cells already run.")
@click.option("--out", "out_dir", default="docs/benchmarks", show_default=True)
@handle_errors
def bench_scale(sizes, kinds, work, profile, basis, report_only, out_dir):
    """Synthetic corpora of each size from the MTRAG pool (sentences recombined, MiniLM vectors of pool passages
    mixed with noise); per size and index type: build time and peak RSS, disk, load time, query p50/p95 (one query
    and batches of 32), recall@10 against exact search, the cost of adding 1% new passages. Each cell runs in its
    own process; cells already in WORK are skipped. Writes scale.json, scale-table.md and scale.png to --out."""
    from local_rag.bench.scale import KINDS, run_all
    from local_rag.bench.scale_report import write_scale_report
    from local_rag.errors import BadInputError

    work_dir = Path(work).expanduser()
    size_list = _sizes(sizes)
    wanted = [k.strip() for k in kinds.split(",") if k.strip()]
    if unknown := sorted(set(wanted) - set(KINDS)):
        raise BadInputError(f"unknown cell kind(s) {unknown}; choose from {KINDS}")
    if not report_only:
        run_all(work_dir, size_list, wanted, profile, basis,
                log=lambda line: click.echo(line, err=True))
    files = write_scale_report(work_dir, Path(out_dir))
    click.echo("written: " + ", ".join(files.values()))
