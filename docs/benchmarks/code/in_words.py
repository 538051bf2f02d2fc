"""Session 59: the questions as a person who does not know the code's names asks them: each identifier the LLM quoted
in backticks written as its words, lower-case (`read_code` -> "read code", `IndexFolder` -> "index folder"; by
`local_rag.index.sparse.identifier_words`, the split BM25 makes). Reads a queries JSONL, writes one to stdout.

    .venv/bin/python docs/benchmarks/code/in_words.py QUERIES_JSONL > OUT_JSONL
"""

from __future__ import annotations

import json
import re
import sys

from local_rag.index.sparse import identifier_words


def in_words(word: re.Match[str]) -> str:
    split = identifier_words(word.group(0)).split(" ")
    return " ".join(split[1:]).lower() if len(split) > 1 else word.group(0)


def main(path: str) -> None:
    changed = 0
    for line in open(path, encoding="utf-8"):
        query = json.loads(line)
        text = re.sub(r"`([^`]+)`", lambda quoted: re.sub(r"\w+", in_words, quoted.group(1)), query["text"])
        changed += text != query["text"]
        print(json.dumps(query | {"text": text}, ensure_ascii=False))
    print(f"{changed} question(s) name code in backticks, written in words", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
