"""Docs that run: every ``local-rag ...`` command in the top-level *.md, docs/*.md and models/README.md names a
subcommand and flags that exist.

Each command is checked against the live click tree (nothing runs): the subcommand path must resolve (``a|b``
alternatives each), and every ``--flag`` must be an option of that subcommand. Notation the docs use is understood:
``[--json]`` optional parts, ``ID...`` and ``<name>`` placeholders, ``# comments``, ``VAR=x`` prefixes and pipes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from local_rag.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [*sorted(ROOT.glob("*.md")), *sorted((ROOT / "docs").glob("*.md")), ROOT / "models" / "README.md"]
STOP = {"|", "||", "&&", ";", ">", ">>", "2>&1", "&"}


def doc_commands() -> list[tuple[str, str]]:
    """(``file:line``, command text) for every ``local-rag`` command in code blocks and inline code."""
    found: list[tuple[str, str]] = []
    for path in DOCS:
        in_block = False
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{n}"
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            if in_block:
                m = re.search(r"(?:^|[\s$(;])(local-rag\s.*)$", line)
                if m and not line.lstrip().startswith("#"):
                    found.append((where, m.group(1)))
            else:
                found += [(where, cmd) for cmd in re.findall(r"`(local-rag\s[^`]+)`", line)]
    return found


def _tokens(text: str) -> list[str]:
    text = re.sub(r"\s#\s.*$", "", text)  # a trailing comment
    text = text.replace("[", " ").replace("]", " ")
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError:  # an unbalanced quote in prose: split on spaces
        tokens = text.split()
    out = []
    for tok in tokens[1:]:  # tokens[0] is local-rag
        if tok in STOP:
            break
        out.append(tok)
    return out


def _options(command: click.Command) -> dict[str, bool]:
    """Option name -> whether it takes a value."""
    out: dict[str, bool] = {"--help": False}
    for param in command.params:
        if isinstance(param, click.Option):
            takes = not (param.is_flag or param.count)
            for name in [*param.opts, *param.secondary_opts]:
                out[name] = takes
    return out


def check(text: str) -> list[str]:
    """Problems with one documented command (empty: it parses)."""
    tokens = _tokens(text)
    paths: list[tuple[click.Command, list[str]]] = [(cli, [])]
    ctx = click.Context(cli)
    i = 0
    while i < len(tokens) and isinstance(paths[0][0], click.Group):
        tok = tokens[i]
        if tok.startswith("-") or not re.fullmatch(r"[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*", tok):
            break
        nxt = []
        for group, names in paths:
            for alt in tok.split("|"):
                sub = group.get_command(ctx, alt)  # type: ignore[attr-defined]
                if sub is None:
                    return [f"no command `local-rag {' '.join([*names, alt])}`"]
                nxt.append((sub, [*names, alt]))
        paths = nxt
        i += 1
    problems = []
    for command, names in paths:
        opts = _options(command)
        j = i
        while j < len(tokens):
            tok = tokens[j].rstrip(",.")
            if re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", tok):
                name = tok.split("=", 1)[0]
                if name not in opts:
                    problems.append(f"`local-rag {' '.join(names)}` has no option {name}")
                elif opts[name] and "=" not in tok:
                    j += 1  # its value
            j += 1
    return problems


def test_docs_name_commands():
    assert len(doc_commands()) > 30  # README and docs show many; a broken extractor would find none


@pytest.mark.parametrize("where, text", doc_commands(), ids=lambda v: v if ":" in str(v) else None)
def test_documented_command_parses(where: str, text: str):
    problems = check(text)
    assert not problems, f"{where}: {text!r}: {'; '.join(problems)}"


def test_the_checker_catches_what_it_should():
    assert check("local-rag index build corpus.jsonl --index docs") == []
    assert check("local-rag index info|verify --index docs") == []
    assert check("local-rag search \"q\" --index docs [--json]") == []
    assert check("local-rag no-such-command --x") == ["no command `local-rag no-such-command`"]
    assert check("local-rag ask \"q\" --no-such-flag") == ["`local-rag ask` has no option --no-such-flag"]
    assert check("local-rag serve --sources-footer --port 8001 | tee log") == []
