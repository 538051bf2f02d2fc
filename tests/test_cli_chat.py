"""``local-rag ask`` and ``local-rag chat`` end to end: a real index, the real SmolLM2 GGUF on llama.cpp."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import CORPUS, needs_minilm, write_jsonl
from .test_cli import assert_clean_error, run

pytestmark = [pytest.mark.llm, needs_minilm]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("llama_cpp")
    cwd = tmp_path_factory.mktemp("chat")
    corpus = write_jsonl(cwd / "c.jsonl", CORPUS)
    result = run("index", "build", str(corpus), "--index", "default", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd


ENV = {"LOCAL_RAG_LLM__MAX_TOKENS": "48", "LOCAL_RAG_GENERATE__MAX_TOKENS": "48"}


def test_ask_json_has_answer_citations_rewrite_passages_timings(workdir: Path):
    result = run("ask", "How long do cats sleep?", "--json", cwd=workdir, env=ENV)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] in ("answer", "decline", "clarify", "chitchat") and isinstance(data["answer"], str) and data["answer"]
    assert {q["mode"] for q in data["queries"]} <= {"lastturn", "rewrite"} and data["passages"]
    assert {"rewrite", "retrieval", "generate", "total"} <= set(data["timings_s"])
    assert {c["stage"] for c in data["llm_calls"]} <= {"rewrite", "generate"}
    for citation in data["citations"]:
        assert citation["passage_id"] in {p["passage_id"] for p in data["passages"]}


def test_ask_shows_where_an_answer_came_from_cited_or_not(workdir: Path):
    """Session 52: `ask` printed an answer the model left uncited with nothing under it (the sources were printed
    from the citations alone); now every answer lists where it came from: its citations, or the passages it was
    written from under a line that says it cites none."""
    from local_rag.cli.ask import print_sources
    from local_rag.records import Answer, Hit, TurnResult

    result = run("ask", "How long do cats sleep?", "--no-rewrite", cwd=workdir, env=ENV)
    assert result.returncode == 0, result.stderr
    answer, *rest = result.stdout.strip().splitlines()
    if not any(w in answer for w in ("I don't know", "I'm sorry", "not sure")):  # the small model may decline
        assert any(line.startswith("  [") for line in rest), result.stdout
        assert ("cites no passage" in result.stdout) == ("[" not in answer)
    given = [Hit("d1-1", 1.0, title="Cats", doc_id="d1"), Hit("report.pdf#p2", 0.5, title="Report", doc_id="report.pdf",
                                                                page=2)]
    lines: list[str] = []
    print_sources(TurnResult(Answer("Cats sleep a lot.", passages=given), [], given, given), lines.append)
    assert lines == ["  (the answer cites no passage; it was written from these 2:)", "  [1] Cats (d1-1)",
                     "  [2] Report (report.pdf p. 2)"]
    lines.clear()
    print_sources(TurnResult(Answer("I don't know.", "decline", passages=given), [], given, given), lines.append)
    assert lines == []
    print_sources(TurnResult(Answer("Cats sleep a lot.", passages=given[:1]), [], given, given[:1]), lines.append)
    assert lines == ["  (the answer cites no passage; it was written from this one:)", "  [1] Cats (d1-1)"]  # not "these 1"
    lines.clear()
    # pieces of one file under one heading share a line; a citation its sentence shares no word with is marked (the
    # demo's "The capital of France is Paris [1]" over a page about settings)
    pages = [Hit("configuration.md", 1.0, title="Settings and profiles", doc_id="configuration.md",
                 text="All settings live in one typed settings model."),
             Hit("indexing.md#s0", 0.9, title="Building an index", doc_id="indexing.md", section="Building an index",
                 text="index sync keeps an index in step with a folder."),
             Hit("indexing.md#s1", 0.8, title="Building an index", doc_id="indexing.md", section="Building an index",
                 text="A sync embeds only new and changed files.")]
    lines.clear()
    print_sources(TurnResult(Answer("The capital of France is Paris [1].", passages=pages), [], pages, pages),
                  lines.append)
    assert lines == ["  (the answer cites no passage; it was written from these 3:)",
                     "  [1] Settings and profiles (configuration.md)", "  [2][3] Building an index (indexing.md)"]
    from local_rag.records import Citation

    cited = Answer("The capital of France is Paris [1]. A sync embeds only changed files [2, 3].", passages=pages,
                   citations=[Citation.of(n, pages[n - 1]) for n in (1, 2, 3)])
    lines.clear()
    print_sources(TurnResult(cited, [], pages, pages), lines.append)
    assert lines == ["  [1] Settings and profiles (configuration.md) (cited, but no word of the sentence citing it is "
                     "in this passage)", "  [2][3] Building an index (indexing.md)"]


def test_ask_bad_inputs(workdir: Path):
    assert_clean_error(run("ask", "   ", cwd=workdir, env=ENV), 2, "the question is empty")
    bad = workdir / "bad.json"
    bad.write_text('{"input": [{"speaker": "user", "text": 3}]}')
    assert_clean_error(run("ask", "--conversation", str(bad), cwd=workdir, env=ENV), 2, "'text' must be a string")
    huge = run("ask", "cats " * 20_000, "--no-rewrite", "--json", cwd=workdir, env=ENV)
    assert huge.returncode == 0, huge.stderr
    assert "cut to" in huge.stderr


def test_chat_session_commands_and_save(workdir: Path):
    saved = workdir / "conv.json"
    script = "\n".join(["/help", "", "Tell me about dogs", "/sources", "/rewrite", f"/save {saved}", "/reset", "/quit"]) + "\n"
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=script)
    assert result.returncode == 0, result.stderr
    assert "commands:" in result.stdout and "agent>" in result.stdout and "lastturn: Tell me about dogs" in result.stdout
    conv = json.loads(saved.read_text())
    assert [t["speaker"] for t in conv] == ["user", "agent"] and conv[0]["text"] == "Tell me about dogs"
    again = run("chat", "--no-rewrite", "--load", str(saved), "--save", str(saved), cwd=workdir, env=ENV, stdin="and do they bark?\n")
    assert again.returncode == 0, again.stderr
    assert len(json.loads(saved.read_text())) == 4


def test_chat_commands_before_an_answer_unknown_ones_and_a_message_that_begins_with_a_slash(workdir: Path):
    """Session 50: `/sources` before any answer, `/save` without a file and `/usr/lib?` (a question) each printed the
    help and nothing else; the question could not be asked at all."""
    saved = workdir / "slash.json"
    script = "\n".join(["/sources", "/trace", "/save", "/frobnicate now", "//usr/lib: what lives there?",
                        f"/save {saved}", "/quit"]) + "\n"
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "(/sources: no answer yet in this conversation)" in out and "(/trace: no answer yet in this conversation)" in out
    assert "(/save needs a FILE: /save conversation.json)" in out
    assert "(unknown command /frobnicate; a message that begins with '/' takes two: //frobnicate now)" in out
    assert json.loads(saved.read_text())[0] == {"speaker": "user", "text": "/usr/lib: what lives there?"}


def test_sources_and_rewrite_after_small_talk_say_why_there_are_none(workdir: Path):
    """Session 51: after "thanks!" (small talk, answered without a search) `/sources` and `/rewrite` printed nothing."""
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin="thanks!\n/sources\n/rewrite\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "(no passages: the last message was small talk, answered without a search)" in result.stdout
    assert "(no queries: the last message was small talk, answered without a search)" in result.stdout


def test_chat_loads_and_warms_while_the_user_types(workdir: Path):
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin="Tell me about dogs\n/trace\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "warm: the index, embedder and LLM loaded before this turn" in result.stdout  # the chat's start


def test_chat_save_never_replaces_another_conversation_or_a_document(workdir: Path):
    """Before, `chat --save notes.json` replaced yesterday's conversation at the first turn, and `--save report.pdf`
    (a typo) the document itself. Now both are refused before any model loads, and `/save` refuses a file that is
    not a conversation, keeping the chat."""
    old = workdir / "yesterday.json"
    old.write_text(json.dumps([{"speaker": "user", "text": "hi"}, {"speaker": "agent", "text": "hello"}]))
    report = workdir / "report.pdf"
    report.write_bytes(b"%PDF-1.4 a document")
    assert_clean_error(run("chat", "--save", str(old), cwd=workdir, env=ENV, stdin="/quit\n"), 2,
                       f"{old} holds a conversation of 2 turns, which --save would replace: go on with it (--load")
    assert_clean_error(run("chat", "--save", str(report), cwd=workdir, env=ENV, stdin="/quit\n"), 2,
                       f"{report} exists and is not a saved conversation")
    kept = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=f"/save {report}\n/save {old}\n/quit\n")
    assert kept.returncode == 0, kept.stderr
    assert "is not a saved conversation" in kept.stdout and "nothing saved" in kept.stdout
    assert f"saved to {old}, replacing the 2 turns it held" in kept.stdout
    assert report.read_bytes() == b"%PDF-1.4 a document" and json.loads(old.read_text()) == []


def test_chat_keeps_each_conversation_it_saved_and_survives_bad_files(workdir: Path):
    """Session 48: with `--save a.json`, `/reset` (or `/load` of another file) and one more turn replaced the
    conversation a.json held; `/load missing.json` ended the chat with an error, `/save` into a missing folder with a
    traceback, both losing the conversation. Now a.json keeps the conversation it held, `/save FILE` saves and
    goes on saving there ("save as"), and a file that cannot be read or written is a note: the chat goes on."""
    first, second = workdir / "a.json", workdir / "b.json"
    assert_clean_error(run("chat", "--save", str(workdir / "no" / "a.json"), cwd=workdir, env=ENV, stdin="/quit\n"),
                       2, "no folder")
    script = "\n".join(["Tell me about dogs", "/reset", "Tell me about cats", f"/load {workdir / 'missing.json'}",
                        f"/save {workdir / 'no' / 'c.json'}", f"/save {second}", "and do they sleep?", "/quit"]) + "\n"
    result = run("chat", "--no-rewrite", "--save", str(first), cwd=workdir, env=ENV, stdin=script)
    assert result.returncode == 0, result.stderr
    assert f"{first} keeps the last one and is no longer written" in result.stdout
    assert "conversation file not found" in result.stdout and "the conversation is unchanged" in result.stdout
    assert "could not save to" in result.stdout and "nothing saved" in result.stdout
    assert [t["text"] for t in json.loads(first.read_text()) if t["speaker"] == "user"] == ["Tell me about dogs"]
    assert [t["text"] for t in json.loads(second.read_text()) if t["speaker"] == "user"] == [
        "Tell me about cats", "and do they sleep?"]
    assert not (workdir / "no").exists()


def test_a_long_conversation_drops_its_oldest_turns_without_a_warning(workdir: Path):
    """Session 48: past the history cap (600 tokens), every turn printed "generate: token budget: dropped the N
    oldest of M turns" on the user's screen; the cap is by design, so that is now an INFO note (LOCAL_RAG_DEBUG)."""
    turns = [{"speaker": "user" if i % 2 == 0 else "agent", "text": f"turn {i} about dogs and cats " * 30}
             for i in range(12)] + [{"speaker": "user", "text": "How long do cats sleep?"}]
    conv = workdir / "long.json"
    conv.write_text(json.dumps(turns))
    result = run("ask", "--conversation", str(conv), cwd=workdir, env=ENV)
    assert result.returncode == 0, result.stderr
    assert "oldest of 13 turns" not in result.stderr and "token budget" not in result.stderr
    debug = run("ask", "--conversation", str(conv), "--no-rewrite", cwd=workdir, env={**ENV, "LOCAL_RAG_DEBUG": "1"})
    assert debug.returncode == 0, debug.stderr
    assert "local_rag.llm.budget: generate: token budget: dropped the" in debug.stderr


def test_chat_saves_the_documents_it_searches_and_loads_them_again(workdir: Path):
    """Session 53 left it so: `/save` kept the turns, not the scope, and a conversation about one document went on
    over all of them after `/load`. Now a scoped conversation is saved as a task record with its ``only`` patterns,
    which ``--load`` and `/load` take up (a scope that names nothing now is said, the chat goes on unscoped), and
    which `ask --conversation` reads as before."""
    saved = workdir / "scoped.json"
    saved.unlink(missing_ok=True)
    first = run("chat", "--no-rewrite", cwd=workdir, env=ENV,
                stdin=f"/only d2\nTell me about dogs\n/save {saved}\n/quit\n")
    assert first.returncode == 0, first.stderr
    data = json.loads(saved.read_text())
    assert data["only"] == [["d2"]] and [t["speaker"] for t in data["input"]] == ["user", "agent"]
    again = run("chat", "--no-rewrite", "--load", str(saved), cwd=workdir, env=ENV, stdin="/only\n/quit\n")
    assert again.returncode == 0, again.stderr
    assert "(index default, profile " in again.stdout and "searching 1 document: d2)" in again.stdout
    loaded = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=f"/load {saved}\n/quit\n")
    assert "(loaded 2 turns; searching 1 document: d2)" in loaded.stdout, loaded.stdout
    gone = workdir / "gone.json"
    gone.write_text(json.dumps({**data, "only": [["d9"]]}))
    stale = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=f"/load {gone}\n/quit\n")
    assert f"(loaded 2 turns; the scope saved in {gone}: 'd9' matches no document of index 'default'" in stale.stdout
    assert "; still searching every document)" in stale.stdout
    started = run("chat", "--no-rewrite", "--load", str(gone), cwd=workdir, env=ENV, stdin="/quit\n")
    assert started.returncode == 0 and "note: the scope saved in" in started.stderr
    assert "; searching every document" in started.stderr
    follow = workdir / "follow.json"  # the saved file, a question added: what `ask --conversation` answers
    follow.write_text(json.dumps({**data, "input": [*data["input"], {"speaker": "user", "text": "And cats?"}]}))
    asked = run("ask", "--conversation", str(follow), "--no-rewrite", "--json", cwd=workdir, env=ENV)
    assert asked.returncode == 0, asked.stderr


def test_chat_only_keeps_the_turns_to_some_documents(workdir: Path):
    """``/only`` narrows the documents mid-chat (a typo keeps the scope it had), ``/only`` alone says which, ``/all``
    widens again; ``chat --only`` starts scoped."""
    md = workdir / "cats.md"
    md.unlink(missing_ok=True)
    script = "\n".join(["/only", "/only d9", "/only d2", "Tell me about cats", "/sources", "/sources 1", "/sources 9",
                        f"/export {md}", f"/export {md}", "/export", "/all", "/quit"]) + "\n"
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "(searching every document)" in out
    assert "(/only 'd9' matches no document of index 'default' (5 documents" in out and "; still searching every document)" in out
    assert "(searching 1 document: d2)" in out
    turn = out.split("(searching 1 document: d2)")[1].split("(searching every document)")[0]
    assert "1 source: Dogs" in turn and "  [1] d2-0 Dogs score=" in turn and "d1-" not in turn  # cats asked, dogs only
    # /sources N: the passage in full under where it is (the list shows 300 characters)
    assert "  [1] Dogs (d2-0) <u2>\n\nDogs are loyal companions; they bark, fetch sticks and guard the house.\n" in turn
    assert "(/sources N: N is a passage number, 1 to 1)" in turn
    # /export: a Markdown transcript with each answer's sources; an existing file is never replaced
    assert f"(exported 2 turns to {md}, with the sources of 1 of 1 answers)" in out
    assert f"({md} exists: /export writes a new file, choose another name)" in out
    assert "(/export needs a FILE: /export conversation.md)" in out
    exported = md.read_text()
    assert exported.startswith("# Conversation with index default (") and "**You:** Tell me about cats" in exported
    assert "**local-rag:** " in exported and "- [1] Dogs (d2-0) <u2>" in exported
    started = run("chat", "--no-rewrite", "--only", "d1", cwd=workdir, env=ENV, stdin="/only\n/quit\n")
    assert started.returncode == 0, started.stderr
    assert "searching 1 document: d1)" in started.stdout


def test_chat_also_searches_another_index_from_the_next_turn(workdir: Path):
    """``/also INDEX`` adds an index to the chat's search (a missing one is said, and the chat goes on as it was),
    ``/also`` alone says which, ``/also none`` goes back to the index alone; ``chat --also`` starts with it."""
    corpus = write_jsonl(workdir / "extra.jsonl", [
        {"_id": "l1-0", "title": "Lighthouses", "text": "The lighthouse keeper lit the lamp at dusk every day."}])
    built = run("index", "build", str(corpus), "--index", "extra", cwd=workdir)
    assert built.returncode == 0, built.stderr
    script = "\n".join(["/also", "/also nope", "/also extra", "Who lit the lighthouse lamp?", "/sources", "/also none",
                        "/also", "/quit"]) + "\n"
    result = run("chat", "--no-rewrite", cwd=workdir, env=ENV, stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("(searching default alone)") == 3  # /also, after the missing one, after /also none
    assert "(no index at " in out and "; still searching default alone)" in out
    assert "(searching default with extra: passages named INDEX:document)" in out
    turn = out.split("with extra: passages named INDEX:document)")[1].split("(searching default alone)")[0]
    assert "extra:l1-0 Lighthouses" in turn  # /sources lists it, named by its index
    started = run("chat", "--no-rewrite", "--also", "extra", cwd=workdir, env=ENV, stdin="/also\n/quit\n")
    assert started.returncode == 0, started.stderr
    assert "local-rag chat (index default with extra," in started.stdout
    assert "(searching default with extra: passages named INDEX:document)" in started.stdout
