"""Tables and log-log charts of the scale benchmark's cells (`local_rag.bench.scale`), for docs/benchmarks/.

Example:
    >>> write_scale_report(Path("~/.cache/local-rag/scale"), Path("docs/benchmarks"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError

# the query setting reported per ANN index (the one that reaches recall@10 >= 0.95 at every size measured)
SIDE_TABLES = ("hybrid", "folder", "chunks", "qdrant")  # cells with their own table, not a row of the main one
REPORTED = {"flat": ("exact", 0), "hnsw": ("efSearch", 128), "ivf-sq8": ("nprobe", 64), "ivf-pq": ("nprobe", 64)}


def load_cells(work: Path) -> dict[tuple[int, str, str], dict[str, Any]]:
    cells = {}
    for path in sorted((work / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cells[(int(data["size"]), data["kind"], data["step"])] = data
    return cells


def _sweep(query: dict[str, Any], kind: str) -> dict[str, Any] | None:
    param, value = REPORTED.get(kind, ("", 0))
    return next((row for row in query.get("sweep", []) if row.get(param) == value), None)


def rows(cells: dict[tuple[int, str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (size, index type) with every figure the issue asks for."""
    out = []
    for size, kind in sorted({(s, k) for s, k, _ in cells}):
        build, query = cells.get((size, kind, "build"), {}), cells.get((size, kind, "query"), {})
        row: dict[str, Any] = {"size": size, "kind": kind}
        if kind in REPORTED and build:
            sweep = _sweep(query, kind) or {}
            row.update(factory=build.get("factory"), build_s=build.get("build_s"), build_cpu_s=build.get("build_cpu_s"),
                       peak_rss_mb=build.get("peak_rss_mb"), disk_mb=build.get("disk_mb"),
                       raw_vectors_mb=build.get("raw_vectors_mb"), load_s=query.get("load_s"),
                       index_rss_mb=query.get("index_rss_mb"), single=sweep.get("single"), batch=sweep.get("batch"),
                       recall_at_10=sweep.get("recall_at_10"), add_1pct_s=build.get("add_1pct_s"),
                       add_1pct_cpu_s=build.get("add_1pct_cpu_s"))
        elif kind == "bm25" and build:
            one = query.get("one_segment", {})
            row.update(factory="bm25s (mmap)", build_s=build.get("build_s"), build_cpu_s=build.get("build_cpu_s"),
                       peak_rss_mb=build.get("peak_rss_mb"), disk_mb=build.get("disk_mb"), load_s=one.get("load_s"),
                       index_rss_mb=one.get("index_rss_mb"), single=one.get("single"), batch=one.get("batch"),
                       single_after_add=query.get("after_add", {}).get("single"), add_1pct_s=build.get("add_1pct_s"),
                       add_1pct_cpu_s=build.get("add_1pct_cpu_s"))
        elif kind == "hybrid" and query:
            row.update({k: v["single"] for k, v in query.items() if isinstance(v, dict) and "single" in v})
        elif kind == "folder" and query:
            row.update({k: query.get(k) for k in ("dense_kind", "factory", "added", "add_s", "sparse_s", "faiss_s",
                                                  "segments", "peak_rss_mb")})
        elif kind == "chunks" and query:
            row.update({k: query.get(k) for k in ("file_mb", "offsets", "parsed")})
        elif kind == "qdrant" and build and query:
            row.update({k: build.get(k) for k in ("local_build_s", "local_build_cpu_s", "local_factory", "local_disk_mb",
                                                  "convert_s", "convert_cpu_s", "convert_peak_rss_mb", "qdrant_storage_mb")})
            row.update({k: query.get(k) for k in ("queries", "local", "qdrant", "hybrid_overlap_at_10", "hybrid_identical",
                                                  "bm25_overlap_at_10", "dense_overlap_at_10",
                                                  "bm25_same_scores", "dense_same_scores")})
        else:
            continue
        out.append(row)
    return out


def _ms(stats: dict[str, float] | None) -> str:
    if not stats:
        return ""
    cpu = f" (CPU {stats['cpu_p50_ms']:.2f}/{stats['cpu_p95_ms']:.2f})" if "cpu_p50_ms" in stats else ""
    return f"{stats['p50_ms']:.2f}/{stats['p95_ms']:.2f}{cpu}"


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| passages | index | build s (CPU s) | peak RSS MiB | disk MiB | load s | index RAM MiB | one query p50/p95 ms "
             "(CPU) | batch of 32 p50/p95 ms (CPU) | recall@10 | add 1% s (CPU s) |", "|" + "---|" * 11]
    for r in table:
        if r["kind"] in SIDE_TABLES:
            continue
        cpu = f" ({r['build_cpu_s']:.1f})" if r.get("build_cpu_s") is not None else ""
        add_cpu = f" ({r['add_1pct_cpu_s']:.2f})" if r.get("add_1pct_cpu_s") is not None else ""
        lines.append(f"| {r['size']:,} | {r['factory']} | {r['build_s']:.1f}{cpu} | {r['peak_rss_mb']:.0f} | "
                     f"{r['disk_mb']:.1f} | {r.get('load_s') or 0:.2f} | {r.get('index_rss_mb') or 0:.0f} | "
                     f"{_ms(r.get('single'))} | {_ms(r.get('batch'))} | {r.get('recall_at_10', '') or ''} | "
                     f"{r['add_1pct_s']:.2f}{add_cpu} |")
    chunk_rows = [r for r in table if r["kind"] == "chunks"]
    if chunk_rows:
        lines += ["", "| passages | chunks.jsonl MiB | open s: offsets / parsed | RAM held MiB (anonymous RSS): "
                  "offsets / parsed | page cache mapped MiB (file RSS): offsets / parsed | one row read us: offsets / "
                  "parsed |", "|" + "---|" * 6]
        for r in chunk_rows:
            o, p = r["offsets"], r["parsed"]
            lines.append(f"| {r['size']:,} | {r['file_mb']:.0f} | {o['open_s']:.2f} / {p['open_s']:.2f} | "
                         f"{o['anon_rss_added_mb']:.0f} / {p['anon_rss_added_mb']:.0f} | "
                         f"{o['file_rss_added_mb']:.0f} / {p['file_rss_added_mb']:.0f} | "
                         f"{o['read_us']:.1f} / {p['read_us']:.2f} |")
    return "\n".join(lines + _qdrant_lines([r for r in table if r["kind"] == "qdrant"])) + "\n"


def _qdrant_lines(table: list[dict[str, Any]]) -> list[str]:
    """The ``qdrant`` cells: each backend's build (local) or conversion (``index rebuild --backend qdrant``), load and
    hybrid query, and how many of Qdrant's top 10 are the local backend's."""
    if not table:
        return []
    lines = ["", "| passages | backend | build s (CPU s) | peak RSS MiB | disk MiB | load s (CPU s) | hybrid query p50/p95 ms "
             "(CPU) | BM25 / dense CPU p50 ms | hybrid top 10 shared with local (lists identical; BM25 / dense scores equal "
             "rank by rank) |", "|" + "---|" * 9]
    for r in table:
        for backend in ("local", "qdrant"):
            q = r[backend]
            if backend == "local":
                build, peak = f"{r['local_build_s']:.1f} ({r['local_build_cpu_s']:.1f})", ""
                disk, name, shared = r["local_disk_mb"], f"local ({r['local_factory']} + bm25s)", ""
            else:
                build, peak = f"{r['convert_s']:.1f} ({r['convert_cpu_s']:.1f})", f"{r['convert_peak_rss_mb']:.0f}"
                disk, name = r["qdrant_storage_mb"], "Qdrant local mode (embedded)"
                shared = (f"{r['hybrid_overlap_at_10']:.4f} ({r['hybrid_identical']} of {r['queries']}; "
                          f"{r.get('bm25_same_scores')} / {r.get('dense_same_scores')} of {r['queries']})")
            lines.append(f"| {r['size']:,} | {name} | {build} | {peak} | {disk:.0f} | {q['load_s']:.2f} ({q['load_cpu_s']:.2f}) "
                         f"| {_ms(q['hybrid'])} | {q['bm25']['cpu_p50_ms']:.2f} / {q['dense']['cpu_p50_ms']:.2f} | {shared} |")
    return lines


def charts(table: list[dict[str, Any]], out: Path) -> list[Path]:
    """Log-log charts of build time, disk, index RAM and query p50 (CPU) against corpus size, per index type."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {"build_cpu_s": "build CPU s", "disk_mb": "disk MiB", "index_rss_mb": "index RAM MiB",
               "query_cpu_ms": "one query p50 CPU ms"}
    fig, axes = plt.subplots(1, len(figures), figsize=(4.2 * len(figures), 3.6))
    kinds = sorted({r["kind"] for r in table if r["kind"] not in SIDE_TABLES})
    for ax, (key, label) in zip(axes, figures.items(), strict=True):
        for kind in kinds:
            points = []
            for r in table:
                if r["kind"] != kind:
                    continue
                value = (r.get("single") or {}).get("cpu_p50_ms") if key == "query_cpu_ms" else r.get(key)
                if value:
                    points.append((r["size"], value))
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=kind, color=f"C{kinds.index(kind)}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("passages")
        ax.set_title(label)
        ax.grid(True, which="both", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=f"C{i}", marker="o", label=kind) for i, kind in enumerate(kinds)]
    fig.legend(handles=handles, loc="upper center", ncol=max(1, len(kinds)), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    path = out / "scale.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def write_scale_report(work: Path, out: Path, plot: bool = True) -> dict[str, str]:
    cells = load_cells(work)
    if not cells:  # an empty report would replace the committed one (the default --out is docs/benchmarks)
        raise BadInputError(f"no results in {work}: nothing to report (run bench-scale without --report-only, or give "
                            "the --work of that run)")
    out.mkdir(parents=True, exist_ok=True)
    table = rows(cells)
    (out / "scale.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    (out / "scale-table.md").write_text(markdown(table), encoding="utf-8")
    files = {"json": str(out / "scale.json"), "table": str(out / "scale-table.md")}
    if plot:
        files["chart"] = str(charts(table, out)[0])
    return files
