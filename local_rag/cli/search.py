"""``local-rag search``: retrieve for a question or a conversation file."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from local_rag.cli.main import (
    adaptation_option,
    also_list,
    also_option,
    handle_errors,
    load,
    only_list,
    only_option,
    settings_options,
)

if TYPE_CHECKING:
    from local_rag.records import Hit, Query
    from local_rag.rerank.base import Reranker
    from local_rag.retrieve.hybrid import HybridRetriever
    from local_rag.retrieve.joint import JointRetriever
    from local_rag.retrieve.scope import Scope
    from local_rag.settings import Settings

MAX_MESSAGE_CHARS = 20_000  # longer messages are cut (and say so): a turn is a question, not a document


def read_question(question: str | None, conversation_file: str | None) -> str | None:
    """QUESTION as given, or read from standard input when it is ``-`` (``echo "..." | local-rag ask -``, as
    ``--conversation -`` reads a conversation); before, ``-`` was searched for and answered as the question.

    Raises:
        BadInputError: both QUESTION and ``--conversation``, or neither; a question on standard input not UTF-8.
    """
    from local_rag.errors import BadInputError

    if bool(question) == bool(conversation_file):
        raise BadInputError("give either a QUESTION or --conversation FILE")
    if question != "-":
        return question
    try:
        return sys.stdin.read().strip()
    except UnicodeDecodeError as exc:
        raise BadInputError("the question on standard input is not UTF-8 text") from exc


def read_conversation(path: str):
    """A conversation from a JSON file: the official ``input`` list, a task record with ``input``, or
    OpenAI-style ``messages``. Turns longer than `MAX_MESSAGE_CHARS` are cut, with a note on stderr."""
    from local_rag import safejson
    from local_rag.errors import BadInputError
    from local_rag.mtrag import parse_conversation
    from local_rag.records import Turn

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise BadInputError(f"conversation file not found: {path}") from exc
    except IsADirectoryError as exc:
        raise BadInputError(f"{path} is a folder; give a conversation JSON file") from exc
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    data = safejson.loads(text, path)
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    conversation = parse_conversation(data, where=path)
    cut = [i for i, turn in enumerate(conversation.turns) if len(turn.text) > MAX_MESSAGE_CHARS]
    for i in cut:
        turn = conversation.turns[i]
        conversation.turns[i] = Turn(turn.speaker, turn.text[:MAX_MESSAGE_CHARS])
    if cut:
        click.echo(f"note: {len(cut)} turn(s) of {path} cut to {MAX_MESSAGE_CHARS} characters", err=True)
    return conversation


def split_csv(values: tuple[str, ...]) -> list[str] | None:
    out = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return out or None


def positive_ints(option: str, text: str) -> list[int]:
    """``"5,10,20"`` -> ``[5, 10, 20]``: a comma-separated list of whole numbers >= 1 (``--depths``, ``--counts``).

    Raises:
        BadInputError: an empty list, or an item that is not a whole number >= 1.
    """
    from local_rag.errors import BadInputError

    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if not (t.isdigit() and int(t) >= 1)]
    if bad or not items:
        raise BadInputError(f"{option}: expected whole numbers >= 1, comma-separated (got {text!r})")
    return sorted({int(t) for t in items})


def load_reranker_or_skip(settings: Settings) -> Reranker | None:
    """The reranker of ``settings``; ``None`` with a warning when its model is missing and ``reranker.fallback`` is
    ``skip`` (as the pipeline does)."""
    from local_rag.errors import ModelError
    from local_rag.rerank import load_reranker

    try:
        return load_reranker(settings.reranker, settings.models_dir)
    except ModelError as exc:
        if settings.reranker.fallback != "skip":
            raise
        click.echo(f"warning: reranker {settings.reranker.model} unavailable ({exc}); searching without it", err=True)
        return None


def reranked_search(retriever: HybridRetriever | JointRetriever, reranker: Reranker | None,
                    scope: Scope | None = None) -> Callable[[list[Query]], list[Hit]]:
    """The retriever's search (of ``scope``'s documents when given), followed by ``reranker`` against the question when
    there is one."""
    search = functools.partial(retriever.search, scope=scope)
    if reranker is None:
        return search
    from local_rag.llm.pipeline import question_of
    from local_rag.rerank.base import reranked

    return reranked(search, reranker, question_of)


@click.command()
@click.argument("question", required=False)
@settings_options
@click.option("--conversation", "conversation_file", help="Conversation JSON file ('-' for stdin).")
@click.option("--mode", "modes", multiple=True, help="Query modes: lastturn, questions (repeat or comma-separate).")
@click.option("--retriever", "retrievers", multiple=True, help="bm25, dense (default: both).")
@click.option("--fusion", type=click.Choice(["rrf", "max"]), help="Fusion method.")
@click.option("-k", "--top-k", type=int, help="Passages to show.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--rewrite", "llm_modes", multiple=True, help="LLM query modes added to --mode: rewrite, keywords, multi, hyde.")
@click.option("--llm-rerank", is_flag=True, help="Listwise LLM reranking of the fused candidates.")
@click.option("--judge", is_flag=True, help="LLM relevance judging (drops irrelevant passages, orders by level).")
@click.option("--cross-encoder/--no-cross-encoder", default=None,
              help="Re-score the fused hits with the reranker model (settings: reranker; default pipeline.cross_encoder).")
@adaptation_option
@only_option
@also_option
@handle_errors
def search(question, profile, config_file, index_name, conversation_file, modes, retrievers, fusion, top_k, as_json, llm_modes, llm_rerank, judge,
           cross_encoder, adaptation, only, also):
    """Search the index for QUESTION ('-': read it from standard input), or the last user turn of --conversation."""
    from local_rag.errors import BadInputError
    from local_rag.records import Conversation, Turn
    from local_rag.retrieve.queries import conversation_queries
    from local_rag.retrieve.scope import Scope
    from local_rag.retrieve.stack import open_searcher

    question = read_question(question, conversation_file)
    settings = load(profile, config_file, index_name, adapted=True, **{
        "retrieval.retrievers": split_csv(retrievers), "retrieval.query_modes": split_csv(modes),
        "fusion.method": fusion, "retrieval.top_k": top_k, "pipeline.cross_encoder": cross_encoder,
        "index_adaptation": adaptation, "retrieval.only": only_list(only), "retrieval.also": also_list(also),
    })
    conversation = read_conversation(conversation_file) if conversation_file else Conversation([Turn("user", question)])
    if not conversation.last_user_turn.strip():
        raise BadInputError("the question is empty")
    from local_rag.dates import dated_turn

    conversation = dated_turn(conversation, settings)  # "yesterday" -> "yesterday (Sun 29 Nov 2026)": documents only
    llm_modes = split_csv(llm_modes) or []
    scope = Scope.of(settings.retrieval.only)
    retriever = open_searcher(settings)
    scoped = retriever.scoped(scope)  # a pattern that matches no document: said now, before a reranker or an LLM loads
    reranker = load_reranker_or_skip(settings) if settings.pipeline.cross_encoder else None
    final_k = settings.retrieval.top_k
    settings.retrieval.top_k = max(final_k, settings.reranker.candidates if reranker else 0,
                                   settings.llm_rerank.candidates if llm_rerank else 0,
                                   settings.judge.candidates if judge else 0)
    if llm_modes or llm_rerank or judge:  # the LLM stages, loaded only when asked for
        from local_rag.llm import load_llm
        from local_rag.llm.pipeline import LLMQueries, post_retrieval

        llm = load_llm(settings.llm, settings.models_dir)
        given = LLMQueries(llm, settings, llm_modes)(conversation) if llm_modes else {}
        modes = list(settings.retrieval.query_modes) + [m for m in llm_modes if m not in settings.retrieval.query_modes]
        queries = conversation_queries(conversation, modes, given)
        hits = post_retrieval(reranked_search(retriever, reranker, scope), llm, settings, llm_rerank, judge)(queries)[:final_k]
    else:
        queries = conversation_queries(conversation, settings.retrieval.query_modes)
        hits = reranked_search(retriever, reranker, scope)(queries)[:final_k]
    if as_json:
        click.echo(json.dumps({
            "queries": [{"mode": q.mode, "text": q.text} for q in queries],
            "hits": [h.to_json() for h in hits],
            "timings_s": retriever.last_timings,
            **({"scope": {"only": scope.to_json(), "documents": list(scoped.documents)}} if scoped else {}),
        }, indent=2, ensure_ascii=False))
        return
    within = f" in {len(scoped.documents)} document(s) of {scope.describe()}" if scoped else ""
    if not hits:  # only BM25 can find nothing (a dense search always ranks every chunk)
        click.echo(f"no passage matches{within}: {queries[0].text[:80]} (BM25 matches passages by their words, leaving out "
                   "common ones like 'the': try other words, or an index with vectors, which searches by meaning)")
        return
    from rich.console import Console
    from rich.table import Table

    from local_rag.adaptation import in_use

    table = Table(title=f"{len(hits)} passages{within} for: {queries[0].text[:80]}", caption=in_use(settings))
    for column in ("#", "passage", "title § section", "fused", "per retriever", "text"):
        table.add_column(column, overflow="fold")
    for hit in hits:
        per = ", ".join(f"{k}={v:.3f}" for k, v in hit.scores.items())
        table.add_row(str(hit.rank), hit.passage_id, _heading(hit), f"{hit.score:.4f}", per, hit.text[:120].replace("\n", " "))
    Console().print(table)


def _heading(hit: Hit) -> str:
    """The hit's title, and the section its chunk starts in when that says more (a piece of a long file)."""
    title = hit.title[:40]
    return f"{title} § {hit.section[:40]}" if hit.section and hit.section != hit.title else title
