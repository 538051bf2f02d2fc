"""Issue 26, session 36: two runs of scripts/bench_peer.py on the same turns, row by row: how many answers are word for
word the same, and the turn times side by side (a fresh machine against a committed run).

    .venv/bin/python docs/benchmarks/levers/s36/same_peer.py docs/benchmarks/peer-s33 docs/benchmarks/peer-s36
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    a, b = (json.loads((Path(p) / "peer.json").read_text(encoding="utf-8")) for p in sys.argv[1:3])
    print(f"| row | answers the same (of turns in both) | turn p50 s, {sys.argv[1]} | turn p50 s, {sys.argv[2]} |")
    print("|---|---:|---:|---:|")
    for row in a["turns"]:
        if row not in b["turns"]:
            continue
        old = {t["task_id"]: t for t in a["turns"][row]}
        new = {t["task_id"]: t for t in b["turns"][row]}
        common = [t for t in old if t in new]
        same = sum(old[t]["answer"] == new[t]["answer"] for t in common)
        print(f"| {row} | {same} of {len(common)} | {a['summary'][row]['turn_p50_s']} | {b['summary'][row]['turn_p50_s']} |")


if __name__ == "__main__":
    main()
