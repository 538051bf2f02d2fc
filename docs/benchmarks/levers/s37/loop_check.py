"""Session 37: does the loop guard's short-block rule change any LLM text of the committed runs?

Every answer, reply and other string of 100+ characters in the `.jsonl` files under docs/benchmarks (and runs/, when
there) is cut with the loop guard before the rule (`git show 541c307:local_rag/llm/loops.py`) and after it, on every
prefix as the decoder checks it; a difference is printed. Then MTRAG's pool passages are searched for the runs the
rule would cut (an 8-15-character block with a word in it, 8 copies in a row).

Run: .venv/bin/python docs/benchmarks/levers/s37/loop_check.py   (~1 min; output: loop_check.txt)
"""

import json
import re
import subprocess
import sys
import types
from pathlib import Path

from local_rag.llm import loops as new

old = types.ModuleType("loops_before")
exec(subprocess.run(["git", "show", "541c307:local_rag/llm/loops.py"], capture_output=True, text=True, check=True).stdout,
     old.__dict__)


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


seen, changed = set(), 0
for root in ("docs/benchmarks", "runs"):
    for path in sorted(Path(root).rglob("*.jsonl")) if Path(root).is_dir() else []:
        for line in path.open(errors="ignore"):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            for text in strings(row):
                if len(text) < 100 or text in seen:
                    continue
                seen.add(text)
                for n in range(100, len(text) + 1):
                    if old.cut_loop(text[:n], 3) != new.cut_loop(text[:n], 3):
                        changed += 1
                        print(f"{path}: {text[max(0, n - 100):n]!r}")
                        break
print(f"{len(seen)} distinct texts of 100+ characters, each prefix checked: {changed} decode differently")

pool = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/mtrag/corpora/pool")
run = re.compile(r"(.{8,15}?)\1{7,}", re.S)
passages = hits = 0
for path in sorted(pool.glob("*.jsonl")):
    for line in path.open(errors="ignore"):
        text = json.loads(line).get("text", "")
        passages += 1
        for m in run.finditer(text):
            if any(c.isalpha() for c in m.group(1)) and any(c.isspace() for c in m.group(1)):
                hits += 1
                print(f"{path.name}: {m.group(0)[:60]!r}")
                break
print(f"{passages} pool passages: {hits} hold an 8-15-character block with a word in it, 8 times or more in a row")
