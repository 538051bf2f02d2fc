"""``local-rag ask`` (one turn) and ``local-rag chat`` (an interactive session)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from local_rag.cli.search import MAX_MESSAGE_CHARS, read_conversation, read_question
from local_rag.errors import BadInputError, LocalRagError

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation
    from local_rag.retrieve.scope import Scope


def stage_options(func: Any) -> Any:
    """``--no-rewrite``, ``--cross-encoder``, ``--llm-rerank``, ``--judge``: switch pipeline stages on or off;
    ``--mode pipeline|agentic`` picks the answering mode (``pipeline.mode``)."""
    func = click.option("--mode", type=click.Choice(["pipeline", "agentic"]), default=None,
                        help="pipeline: rewrite -> retrieve -> rerank -> generate; agentic: the LLM searches (ChatR1), "
                             "settings in `agent`.")(func)
    for name, help_text in (
        ("judge", "LLM relevance judging of the passages."),
        ("llm-rerank", "Listwise LLM reranking."),
        ("cross-encoder", "Cross-encoder reranking (settings: reranker)."),
        ("rewrite", "LLM query rewriting of the last turn."),
    ):
        func = click.option(f"--{name}/--no-{name}", default=None, help=help_text)(func)
    return func


def pipeline_settings(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode=None,
                      adapted=False, **more):
    """Settings from the shared options and the `stage_options`; ``more``: further dotted overrides (None ignored).
    ``adapted``: with the index's adaptation from `train adapt` (`ask`, `chat`, `serve`, unless ``--no-adaptation``
    sets ``index_adaptation``); `bench` leaves it out: it measures the profile as given."""
    return load(profile, config_file, index_name, adapted=adapted, **{
        "pipeline.rewrite": rewrite, "pipeline.cross_encoder": cross_encoder,
        "pipeline.llm_rerank": llm_rerank, "pipeline.judge": judge, "pipeline.mode": mode, **more,
    })


def clip_message(text: str) -> tuple[str, bool]:
    text = text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        return text[:MAX_MESSAGE_CHARS], True
    return text, False


WITHDRAWN = "withdrawn: the passages do not support that draft"


def checked_draft(result: Any) -> tuple[bool, str]:
    """After a streamed draft: whether it stands as the answer, and what the checks after generation did to it (the
    draft gate or the support check withdrew it, removed or flagged sentences, moved citations; "" for nothing)."""
    from local_rag.decide.support import revised, revision_note

    if (result.decision is not None and result.decision.reason == "draft gate") or (
            result.answer.kind == "decline" and revised(result.support)):
        return False, WITHDRAWN
    if result.answer.kind != "answer":
        return False, ""
    return not revised(result.support), revision_note(result.support)


def print_sources(result: Any, echo: Any = click.echo) -> None:
    """The answer's sources under it (`local_rag.sources`): its citations, pieces of one file on one line, a citation
    the sentence citing it shares no word with marked; for an answer that cites none, the passages it was written
    from (before, nothing: an uncited answer gave no clue where it came from)."""
    from local_rag.sources import line_text, source_lines

    heading, lines = source_lines(result.answer)
    if heading:
        echo(f"  ({heading}:)")
    for line in lines:
        echo(f"  {line_text(line)}")
    if result.answer.invalid_citations:
        echo(f"  ({result.answer.invalid_citations} citation(s) to passages that were not given were removed)")


@click.command()
@click.argument("question", required=False)
@settings_options
@stage_options
@adaptation_option
@click.option("--conversation", "conversation_file", help="Conversation JSON file (official 'input' shape; '-' = stdin).")
@click.option("--json", "as_json", is_flag=True, help="Answer, citations, rewrite, passages and per-stage timings as JSON.")
@only_option
@also_option
@handle_errors
def ask(question, profile, config_file, index_name, mode, rewrite, cross_encoder, llm_rerank, judge, adaptation,
        conversation_file, as_json, only, also):
    """Answer one turn: QUESTION ('-': read it from standard input), or the last user turn of --conversation."""
    from local_rag.cli.lines import Streamer
    from local_rag.modes import make_pipeline
    from local_rag.records import Conversation, Turn

    question = read_question(question, conversation_file)
    settings = pipeline_settings(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode,
                                 adapted=True, index_adaptation=adaptation, **{"retrieval.only": only_list(only), "retrieval.also": also_list(also)})
    if conversation_file:
        conversation = read_conversation(conversation_file)
    else:
        text, cut = clip_message(question)
        if not text:
            raise BadInputError("the question is empty")
        if cut:
            click.echo(f"note: the question was cut to {MAX_MESSAGE_CHARS} characters", err=True)
        conversation = Conversation([Turn("user", text)])
    pipeline = make_pipeline(settings)
    pipeline.scope()  # a pattern of --only that matches no document: said now, before the LLM loads
    if as_json:
        result = pipeline.answer(conversation)
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return
    streamer = Streamer("")
    result = pipeline.answer(conversation, on_token=streamer)  # the draft streams; the checks may revise it after
    streamer.finish(result.answer.text, *checked_draft(result))
    print_sources(result)


COMMANDS = ["/sources", "/rewrite", "/trace", "/only", "/all", "/also", "/reset", "/save", "/load", "/export", "/help", "/quit",
            "/exit"]
HELP = """commands: /sources (passages of the last answer; /sources N: passage N in full), /rewrite (queries of the
last turn), /trace (agentic mode: thoughts, searches, passages read), /only PATTERN... (search only these documents:
'reports/2024', '*.pdf'; /only alone: which), /all (every document again), /also INDEX... (search those indexes
too; /also alone: which; /also none: this index alone), /reset, /save FILE (then after every
turn), /load FILE, /export FILE.md (a Markdown transcript with the sources), /help, /quit (or Ctrl-D); a message that
begins with '/' takes two ('//etc/fstab: what is it for?')"""


@click.command()
@settings_options
@stage_options
@adaptation_option
@click.option("--load", "load_file", type=click.Path(), help="Start from a saved conversation (JSON).")
@click.option("--save", "save_file", type=click.Path(), help="Save the conversation here after every turn.")
@click.option("--history", "history", type=click.Path(dir_okay=False),
              help="Line history file on a terminal (default: chat_history in the user data directory; '' = none).")
@only_option
@also_option
@handle_errors
def chat(profile, config_file, index_name, mode, rewrite, cross_encoder, llm_rerank, judge, adaptation, load_file,
         save_file, history, only, also):
    """An interactive multi-turn conversation with the index, answers streamed, sources listed under each. On a
    terminal: line editing, a history file and multi-line paste (prompt_toolkit); piped stdin is read line by line."""
    from local_rag.adaptation import in_use
    from local_rag.cli.lines import chat_completer, history_file, line_reader
    from local_rag.modes import check_models, make_pipeline
    from local_rag.records import Conversation

    conversation = read_conversation(load_file) if load_file else Conversation([])
    if save_file and not (folder := Path(save_file).expanduser().parent).is_dir():
        raise BadInputError(f"--save {save_file}: no folder {folder}")
    if save_file and (held := saved_turns(Path(save_file))) and not (load_file and _same_file(load_file, save_file)):
        raise BadInputError(f"{save_file} holds a conversation of {held} turns, which --save would replace: go on "
                            f"with it (--load {save_file} --save {save_file}) or save to another file")
    settings = pipeline_settings(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode,
                                 adapted=True, index_adaptation=adaptation, **{"retrieval.only": only_list(only), "retrieval.also": also_list(also)})
    check_models(settings)
    pipeline = make_pipeline(settings)
    scope = pipeline.scope()
    if load_file and not only:  # the documents the saved conversation was searching, unless --only says others
        scope, _, problem = saved_scope(pipeline, load_file, scope)
        if problem:
            click.echo(f"note: {problem}; {scope_line(pipeline, scope)}", err=True)
    read = line_reader(history_file() if history is None else (Path(history) if history else None),
                       completer=lambda: chat_completer(COMMANDS, pipeline.retriever.documents))  # type: ignore[attr-defined]
    adapted = in_use(settings)
    joint = f" with {', '.join(settings.retrieval.also)}" if settings.retrieval.also else ""
    click.echo(f"local-rag chat (index {settings.index}{joint}, profile {settings.profile}"
               f"{', ' + adapted if adapted else ''}{', ' + scope_line(pipeline, scope) if scope else ''}). {HELP}")
    try:
        chat_loop(pipeline, conversation, read, save_file, scope)
    finally:
        pipeline.stop_warming()


def scope_line(pipeline: Pipeline, scope: Scope) -> str:
    """``searching 2 documents: q3.pdf, q4.pdf`` (the names when a few, else the patterns)."""
    resolved = pipeline.retriever.scoped(scope)  # type: ignore[attr-defined]
    if resolved is None:
        return "searching every document"
    docs = resolved.documents
    named = ", ".join(docs) if len(docs) <= 4 else f"{scope.describe()} ({', '.join(docs[:3])}, ...)"
    return f"searching {len(docs)} document{'s' if len(docs) != 1 else ''}: {named}"


def export_transcript(conversation: Any, results: dict[int, Any], index: str, arg: str) -> str:
    """``/export FILE.md``: the conversation as Markdown with each answer's sources (`local_rag.transcript`); a file
    that exists is never replaced. Returns the line to show."""
    import datetime

    from local_rag.transcript import transcript

    path = Path(arg).expanduser()
    if path.exists():
        return f"{arg} exists: /export writes a new file, choose another name"
    if not conversation.turns:
        return "nothing to export yet: ask something first"
    text = transcript(conversation, results, index, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return f"could not write {arg}: {exc.strerror or exc}; nothing exported"
    answered = sum(1 for t in conversation.turns if t.speaker == "agent")
    return f"exported {len(conversation.turns)} turns to {arg}, with the sources of {len(results)} of {answered} answers"


def whole_source(result: Any, arg: str) -> str:
    """``/sources N``: passage N of the last answer in full, under where it is (the list shows 300 characters of
    each: a reader checking a claim needs the whole text)."""
    from local_rag.records import Citation

    count = len(result.passages)
    if not arg.isdigit() or not 1 <= int(arg) <= count:
        return f"(/sources N: N is a passage number, 1 to {count})" if count else f"(no passages: {_unsearched(result)})"
    hit = result.passages[int(arg) - 1]
    where = Citation.of(int(arg), hit).label + (f" <{hit.url}>" if hit.url else "")
    return f"  [{arg}] {where}\n\n{hit.text.strip()}\n"


def _patterns(arg: str) -> list[str]:
    """``/only``'s patterns: split as a shell would (a quoted name may hold spaces), and at commas."""
    import shlex

    try:
        words = shlex.split(arg)
    except ValueError:  # an unbalanced quote
        words = arg.split()
    return [p for w in words for p in w.split(",") if p.strip()]


def _also(pipeline: Pipeline, names: list[str] | None) -> str:
    """``/also``: search ``names`` with the index from the next turn on (``none``: the index alone); None: say which
    are searched. What the chat prints, in parentheses."""
    failed = ""
    if names is not None:
        try:
            pipeline.search_also([] if names == ["none"] else names)
        except LocalRagError as exc:  # a missing index: said, and the chat searches as before
            failed = f"{exc}; still "
    also = pipeline.settings.retrieval.also
    return failed + (f"searching {pipeline.settings.index} with {', '.join(also)}: passages named INDEX:document"
                     if also else f"searching {pipeline.settings.index} alone")


def chat_loop(pipeline: Pipeline, conversation: Conversation, read: Callable[[str], str], save_file: str | None,
              scope: Scope | None = None) -> None:
    """`chat`'s turns; the next turn's prompts are prefilled while the user types (`Pipeline.warm_later`). ``scope``:
    the documents searched (default: the settings' ``retrieval.only``), changed by ``/only`` and ``/all``."""
    from local_rag.cli.lines import Streamer
    from local_rag.records import Conversation, Turn

    scope = pipeline.scope() if scope is None else scope
    results: dict[int, Any] = {}  # agent turn's position -> its TurnResult (`/export` lists its sources)

    last: Any = None
    pipeline.warm_later(conversation)
    while True:
        try:
            line = read("you> ")
        except EOFError:
            break
        except KeyboardInterrupt:
            click.echo("\n(interrupted: the saved conversation is intact)")
            break
        pipeline.wait_loaded()  # a model loading on the warm-up's thread silences the terminal: the reply waits for it
        text, cut = clip_message(line)
        if not text:
            continue
        if text.startswith("//"):  # a message that begins with '/' (a path, say): one slash dropped
            text = text[1:]
        elif text.startswith("/"):
            cmd, _, arg = text.partition(" ")
            arg = arg.strip()
            if cmd in ("/quit", "/exit"):
                break
            if cmd == "/reset":
                conversation, last, results = Conversation([]), None, {}
                click.echo(f"(new conversation{_unbound(save_file)})")
                save_file = None
                pipeline.warm_later(conversation)
            elif cmd == "/export" and arg:
                click.echo(f"({export_transcript(conversation, results, pipeline.settings.index, arg)})")
            elif cmd == "/sources" and last and arg:
                click.echo(whole_source(last, arg))
            elif cmd == "/sources" and last:
                for i, hit in enumerate(last.passages, 1):
                    click.echo(f"  [{i}] {hit.passage_id} {hit.title} score={hit.score:.4f}\n      {' '.join(hit.text.split())[:300]}")
                if not last.passages:  # small talk (or a turn nothing was found for): before, nothing at all
                    click.echo(f"  (no passages: {_unsearched(last)})")
            elif cmd == "/rewrite" and last:
                for q in last.queries:
                    click.echo(f"  {q.mode}: {q.text}")
                if not last.queries:
                    click.echo(f"  (no queries: {_unsearched(last)})")
            elif cmd == "/trace" and last:
                print_trace(last)
            elif cmd == "/only" and arg:
                try:
                    scope = pipeline.scope(_patterns(arg), what="/only")
                except LocalRagError as exc:
                    click.echo(f"({exc}; still {scope_line(pipeline, scope)})")
                    continue
                click.echo(f"({scope_line(pipeline, scope)})")
            elif cmd in ("/only", "/all"):
                scope = pipeline.scope() if cmd == "/all" else scope
                click.echo(f"({scope_line(pipeline, scope)})")
            elif cmd == "/also":
                click.echo(f"({_also(pipeline, _patterns(arg) if arg else None)})")
            elif cmd == "/save" and arg:
                try:
                    held = 0 if save_file and _same_file(arg, save_file) else saved_turns(Path(arg))
                    save_conversation(conversation, Path(arg), scope)
                except (BadInputError, OSError) as exc:
                    click.echo(f"({_why(exc, arg)}; nothing saved)")
                    continue
                save_file = arg  # "save as": the later turns go there too
                click.echo(f"(saved to {arg}{f', replacing the {held} turns it held' if held else ''}; each later "
                           "turn is saved there too)")
            elif cmd == "/load" and arg:
                try:
                    loaded = read_conversation(arg)
                except BadInputError as exc:
                    click.echo(f"({exc}; the conversation is unchanged)")
                    continue
                conversation, last, results = loaded, None, {}
                same = save_file is not None and _same_file(arg, save_file)
                scope, searched, problem = saved_scope(pipeline, arg, scope)
                searched = f"; {problem}; still {searched}" if problem else f"; {searched}" if searched else ""
                click.echo(f"(loaded {len(conversation.turns)} turns{searched}{'' if same else _unbound(save_file)})")
                save_file = save_file if same else None
                pipeline.warm_later(conversation)
            elif cmd in ("/sources", "/rewrite", "/trace"):
                click.echo(f"({cmd}: no answer yet in this conversation)")
            elif cmd in ("/save", "/load", "/export"):
                click.echo(f"({cmd} needs a FILE: {cmd} {'conversation.md' if cmd == '/export' else 'conversation.json'})")
            elif cmd == "/help":
                click.echo(HELP)
            else:
                click.echo(f"(unknown command {cmd}; a message that begins with '/' takes two: //{text[1:40]})\n{HELP}")
            continue
        if cut:
            click.echo(f"(your message was cut to {MAX_MESSAGE_CHARS} characters)")
        conversation.turns.append(Turn("user", text))
        streamer = Streamer("agent> ")
        try:
            last = pipeline.answer(conversation, on_token=streamer, on_status=streamer.status, scope=scope)
        except KeyboardInterrupt:
            conversation.turns.pop()
            click.echo("\n(interrupted: the turn was dropped; the saved conversation is intact)")
            continue
        except LocalRagError as exc:  # an index or model gone mid-chat: the conversation so far stays
            conversation.turns.pop()
            click.echo(f"\nerror: {exc}\n(the turn was dropped; the conversation is kept: /save FILE, or fix and ask "
                       "again)", err=True)
            continue
        streamer.finish(last.answer.text, *checked_draft(last))
        print_sources(last)
        conversation.turns.append(Turn("agent", last.answer.text))
        results[len(conversation.turns) - 1] = last
        if save_file:
            try:
                save_conversation(conversation, Path(save_file), scope)
            except OSError as exc:  # a full disk, a folder gone: the chat and its conversation go on
                click.echo(f"({_why(exc, save_file)}; /save FILE saves it elsewhere)", err=True)
        pipeline.warm_later(conversation)


def _same_file(a: str, b: str) -> bool:
    return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()


def _unbound(save_file: str | None) -> str:
    """The note when the conversation being saved is put aside (``/reset``, ``/load`` of another file)."""
    return f"; {save_file} keeps the last one and is no longer written: /save FILE saves this one" if save_file else ""


def _why(exc: Exception, path: str) -> str:
    return f"could not save to {path}: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)


def _unsearched(result: Any) -> str:
    """Why the last turn has no passages or queries to show."""
    if result.answer.kind == "chitchat":
        return "the last message was small talk, answered without a search"
    return "the last turn was answered without a search" if not result.queries else "the search found none"


def print_trace(result: Any, echo: Any = click.echo) -> None:
    """The agentic trace of a turn: thoughts, searches (with latency), passages read, corrections, the answer."""
    if not result.trace:
        echo("  (no trace: this turn was answered in pipeline mode; start chat with --mode agentic)")
    for step in result.trace:
        kind = step["type"]
        if kind == "search":
            echo(f"  search: {step['query']} ({step['latency_s'] * 1000:.0f} ms)")
        elif kind == "information":
            echo("  read: " + ", ".join(f"[{n}] {pid}" for n, pid in zip(step["numbers"], step["passage_ids"], strict=False)))
        elif kind == "answer":
            echo(f"  answer{' (forced)' if step.get('forced') else ''}: {step['text']}")
        elif kind == "invalid":
            echo(f"  invalid step ({step['problem']})")
        else:
            echo(f"  {kind}: {' '.join(str(step.get('text', '')).split())[:300]}")


def saved_turns(path: Path) -> int:
    """How many turns the conversation saved at ``path`` holds (0: no file, or an empty one).

    Raises:
        BadInputError: ``path`` holds something else (a typo such as ``--save report.pdf`` would have replaced it).
    """
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return 0
    try:
        return len(read_conversation(str(path)).turns)
    except BadInputError as exc:
        raise BadInputError(f"{path} exists and is not a saved conversation ({exc}): saving there would replace "
                            "it; choose another file") from exc


def save_conversation(conversation: Any, path: Path, scope: Scope | None = None) -> None:
    """Write the conversation atomically (an interrupted save keeps the old file): the official ``input`` list, or,
    when the chat searches some documents only, a task record with that ``input`` and the scope's patterns
    (``"only"``: its groups), which `/load` and ``--load`` take up again and ``ask --conversation`` reads as before."""
    data: Any = conversation.to_json()
    if scope:
        data = {"input": data, "only": scope.to_json()}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def saved_scope(pipeline: Pipeline, path: str, scope: Scope) -> tuple[Scope, str, str]:
    """The scope a saved conversation was searching (``scope`` when it holds none), what is searched now ("" when the
    file holds no scope), and why the saved scope could not be taken up ("": it could; its patterns name no document
    of this index)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return scope, "", ""
    groups = data.get("only") if isinstance(data, dict) else None
    if not isinstance(groups, list) or not all(isinstance(g, list) and all(isinstance(p, str) for p in g) for g in groups):
        return scope, "", ""
    try:
        found = pipeline.scope(*groups, what=f"the scope saved in {path}:")
    except LocalRagError as exc:
        return scope, scope_line(pipeline, scope), str(exc)
    return found, scope_line(pipeline, found), ""
