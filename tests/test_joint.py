"""Several indexes searched as one (``--also``, `local_rag.retrieve.joint`): real bm25s and FAISS indexes of two
folders, checked against one index of both folders (the dense ranking is the same), the scopes that name an index,
an index without vectors and one embedded by another model beside them, the pipeline reopening a member a sync
changed, and the commands as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_rag.errors import BadInputError
from local_rag.index import build_index
from local_rag.index.sync import sync_index
from local_rag.records import Query
from local_rag.retrieve.joint import JointRetriever
from local_rag.retrieve.scope import Scope
from local_rag.retrieve.stack import open_retriever, open_searcher
from local_rag.settings import Settings

from .conftest import HashEmbedder, make_settings, needs_minilm
from .test_cli import run

NOTES = {"audit.md": "# Audit\n\nThe pump audit is on Friday at the north station.\n",
         "plan.md": "# Plan\n\nWe replace the valves of the north station in March.\n",
         "budget.md": "# Budget\n\nThe valves cost 40,000 euros; the pumps 12,000.\n"}
MAIL = {"ana.md": "# Re: audit\n\nAna: the auditor arrives at 9, bring the pump logs and the valve invoices.\n",
        "lunch.md": "# Lunch\n\nPizza on Thursday, in the canteen.\n"}
QUESTIONS = ["when is the pump audit?", "valves north station", "what does the auditor want?", "pizza"]


def folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def settings_for(tmp_path: Path, index: str, **overrides) -> Settings:
    return make_settings(tmp_path, index=index, **{"chunker": {"tokenizer": "whitespace", "size": 40, "overlap": 5},
                                                   **overrides})


@pytest.fixture
def two(tmp_path: Path) -> tuple[Settings, HashEmbedder]:
    """Indexes `notes` and `mail`, embedded by the same model, and `both`: one index of the two folders."""
    settings = settings_for(tmp_path, "notes")
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, folder(tmp_path / "notes", NOTES), embedder=embedder, progress=False)
    build_index(settings_for(tmp_path, "mail"), folder(tmp_path / "mail", MAIL), embedder=embedder, progress=False)
    both = tmp_path / "both"
    folder(both / "notes", NOTES), folder(both / "mail", MAIL)
    build_index(settings_for(tmp_path, "both"), both, embedder=embedder, progress=False)
    return settings, embedder


def test_the_dense_ranking_over_two_indexes_is_one_indexs(tmp_path: Path, two):
    """Embedded by the same model, two indexes' dense lists merge by cosine: the order is that of one index holding
    both folders, each passage named with its index ("mail:ana.md" for the one index's "mail/ana.md")."""
    settings, embedder = two
    dense = {"retrieval": {"retrievers": ["dense"]}}
    joint = open_searcher(settings_for(tmp_path, "notes", **dense).model_copy(update={}), embedder)
    assert not isinstance(joint, JointRetriever)  # no --also: one index, as before
    joint = open_searcher(settings_for(tmp_path, "notes", retrieval={"retrievers": ["dense"], "also": ["mail"]}),
                          embedder)
    one = open_retriever(settings_for(tmp_path, "both", **dense), embedder)
    assert isinstance(joint, JointRetriever) and joint.families == {"notes": "notes+mail", "mail": "notes+mail"}
    assert joint.members["mail"].embedder is joint.members["notes"].embedder  # one model loaded once
    for question in QUESTIONS:
        got = [(h.passage_id.replace(":", "/", 1), round(h.score, 6)) for h in joint.search([Query(question)], top_k=5)]
        want = [(h.passage_id, round(h.score, 6)) for h in one.search([Query(question)], top_k=5)]
        assert got == want, question
    hybrid = open_searcher(settings_for(tmp_path, "notes", retrieval={"also": ["mail"]}), embedder)
    hits = hybrid.search([Query("what does the auditor want?")], top_k=5)
    assert hits[0].passage_id == "mail:ana.md" and hits[0].doc_id == "mail:ana.md" and hits[0].title == "Re: audit"
    assert {h.doc_id.split(":")[0] for h in hits} == {"notes", "mail"}
    assert set(hybrid.documents()) == {f"notes:{n}" for n in NOTES} | {f"mail:{n}" for n in MAIL}
    assert {"notes.bm25", "notes.dense", "mail.bm25", "mail.dense", "fusion"} <= set(hybrid.last_timings)


def test_a_scope_names_an_index_or_applies_to_each(tmp_path: Path, two):
    settings, embedder = two
    joint = open_searcher(settings_for(tmp_path, "notes", retrieval={"also": ["mail"]}), embedder)
    ask = [Query("pump audit")]
    assert {h.doc_id for h in joint.search(ask, top_k=9, scope=Scope.of(["mail:*"]))} == {"mail:ana.md", "mail:lunch.md"}
    assert {h.doc_id for h in joint.search(ask, top_k=9, scope=Scope.of(["audit.md"]))} == {"notes:audit.md"}
    assert {h.doc_id for h in joint.search(ask, top_k=9, scope=Scope.of(["notes:plan.md", "ana.md"]))} == {
        "notes:plan.md", "mail:ana.md"}
    narrowed = Scope.of(["mail:*"]).narrow(["lunch.md"])  # a server's --only, then a request's
    assert joint.scoped(narrowed).documents == ("mail:lunch.md",)
    with pytest.raises(BadInputError, match=r"'minutes\.pdf' matches no document of index 'notes'.*\(nor of 'mail'\)"):
        joint.search(ask, scope=Scope.of(["minutes.pdf"]))
    with pytest.raises(BadInputError, match="of index 'mail'") as caught:  # named for one index: only it was asked
        joint.search(ask, scope=Scope.of(["mail:minutes.pdf"]))
    assert "nor of" not in str(caught.value)


def test_an_index_without_vectors_or_embedded_by_another_model_is_searched_beside(tmp_path: Path, two):
    """A member keeps its own shape: built --sparse-only, BM25 alone searches it (the first index's dense list stays
    its own); its chunking is its own (a size the first one was not built with)."""
    settings, embedder = two
    sparse = settings_for(tmp_path, "chats", dense={"enabled": False}, retrieval={"retrievers": ["bm25"]},
                          chunker={"tokenizer": "whitespace", "size": 20, "overlap": 2})
    build_index(sparse, folder(tmp_path / "chats", {"day.md": "# Monday\n\nBen: the auditor moved to 10.\n"}),
                progress=False)
    joint = open_searcher(settings_for(tmp_path, "notes", retrieval={"also": ["chats"]}), embedder)
    chats = joint.members["chats"]
    assert chats.embedder is None and list(chats.retrievers) == ["bm25"] and chats.settings.chunker.size == 20
    assert joint.families == {"notes": "notes", "chats": "chats"}
    hits = {h.passage_id: h for h in joint.search([Query("auditor moved")], top_k=2)}
    assert set(hits["chats:day.md"].scores) == {"chats"}  # its best beside notes' best, by rank


@needs_minilm
def test_an_index_embedded_by_another_model_loads_it_and_ranks_apart(tmp_path: Path, two):
    from local_rag.embed import load_embedder

    settings, embedder = two
    real = settings_for(tmp_path, "papers", chunker={"tokenizer": "whitespace", "size": 40, "overlap": 5})
    minilm = load_embedder(real.embedder, real.models_dir)
    build_index(real, folder(tmp_path / "papers", {"gauge.md": "# Gauges\n\nA pump pressure gauge reads bar.\n"}),
                embedder=minilm, progress=False)
    joint = open_searcher(settings_for(tmp_path, "notes", retrieval={"also": ["papers"]}), embedder)
    assert joint.families == {"notes": "notes", "papers": "papers"}
    assert joint.members["papers"].embedder.checksum == minilm.checksum != embedder.checksum
    hit = next(h for h in joint.search([Query("pressure gauge")], top_k=5) if h.doc_id == "papers:gauge.md")
    assert set(hit.scores) == {"papers"}  # its cosine is another model's: its ranking fused by rank, not merged


def test_a_pipeline_reopens_when_an_index_searched_with_it_changes(tmp_path: Path):
    """`index sync --watch` on the mail folder beside `chat --index notes --also mail`: the next turn searches the
    new mail."""
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation, Turn

    sparse = {"dense": {"enabled": False}, "retrieval": {"retrievers": ["bm25"]}}
    sync_index(settings_for(tmp_path, "notes", **sparse), folder(tmp_path / "notes", NOTES), progress=False)
    mail = folder(tmp_path / "mail", MAIL)
    sync_index(settings_for(tmp_path, "mail", **sparse), mail, progress=False)
    pipeline = Pipeline(settings_for(tmp_path, "notes", dense={"enabled": False},
                                     retrieval={"retrievers": ["bm25"], "also": ["mail"]}))
    ask = [Query("glacier moraine")]
    assert not pipeline.retriever.search(ask, top_k=3)
    (mail / "trip.md").write_text("# Trip\n\nA moraine is debris a glacier left behind.\n")
    sync_index(settings_for(tmp_path, "mail", **sparse), mail, progress=False)
    pipeline.answer(Conversation([Turn("user", "hello")]))  # small talk: no LLM, but the turn looks first
    assert [h.passage_id for h in pipeline.retriever.search(ask, top_k=3)] == ["mail:trip.md"]


def test_search_with_also_as_a_user_runs_it(tmp_path: Path):
    """`local-rag search --index notes --also mail` over sparse indexes (no model): both indexes' passages, named;
    `--only mail:*`; a missing or badly named index is one line."""
    folder(tmp_path / "notes", NOTES), folder(tmp_path / "mail", MAIL)
    for name in ("notes", "mail"):
        built = run("index", "build", str(tmp_path / name), "--index", name, "--sparse-only", cwd=tmp_path)
        assert built.returncode == 0, built.stderr
    found = run("search", "pump audit auditor", "--index", "notes", "--also", "mail", "--json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    ids = [h["passage_id"] for h in json.loads(found.stdout)["hits"]]
    assert {"notes:audit.md", "mail:ana.md"} <= set(ids)
    only = run("search", "pump audit", "--index", "notes", "--also", "mail", "--only", "mail:*", "--json",
               cwd=tmp_path)
    assert {h["doc_id"] for h in json.loads(only.stdout)["hits"]} == {"mail:ana.md"}
    missing = run("search", "pump", "--index", "notes", "--also", "nope", cwd=tmp_path)
    assert missing.returncode == 3 and missing.stderr.strip().splitlines()[-1].startswith("error: no index at")
    bad = run("search", "pump", "--index", "notes", "--also", "../mail", cwd=tmp_path)
    assert bad.returncode == 6 and "'../mail' is not an index name" in bad.stderr and "Traceback" not in bad.stderr
