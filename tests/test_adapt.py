"""`local-rag train adapt`: the whole chain on a real folder index (bm25s + FAISS over the real MiniLM), queries
written by the real SmolLM2 GGUF, a real fine-tune of MiniLM, the held-out check, and the settings file it writes
switching the re-scorer on; a rerun asks the LLM nothing and trains nothing; bad input is one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from local_rag.modelstore.manifest import Manifest
from local_rag.train.adapt import AdaptConfig, _decide
from local_rag.train.synth_run import mrr_difference

from .conftest import MODELS, needs_minilm
from .llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

DOCS = {
    "bees.md": "# Honey bees\n\nHoney bees live in colonies of up to sixty thousand workers led by a single queen. "
               "Workers forage for nectar and pollen within a few kilometres of the hive and tell their sisters where "
               "flowers are with a waggle dance.\n\nBees turn nectar into honey by evaporating its water and adding "
               "enzymes. A colony stores about twenty kilograms of honey to survive the winter, when the bees cluster "
               "around the queen and shiver to keep the hive warm.\n",
    "volcano.md": "# Volcanoes\n\nA volcano forms where molten rock called magma rises through the crust. Shield "
                  "volcanoes such as Mauna Loa grow from runny basalt lava that flows for long distances.\n\n"
                  "Stratovolcanoes such as Mount Fuji are steep cones built from layers of ash and thick lava. Their "
                  "eruptions are explosive because gas stays trapped in sticky magma until the pressure is released.\n",
    "bread.md": "# Sourdough bread\n\nSourdough is leavened by a starter, a culture of wild yeast and lactic acid "
                "bacteria kept alive by feeding it flour and water every day.\n\nThe bacteria make lactic and acetic "
                "acid, which give the bread its sour taste and keep it fresh longer. A long cold proof in the fridge "
                "deepens the flavour and makes the crust blister in a hot oven.\n",
    "tides.md": "# Ocean tides\n\nTides are the rise and fall of sea level caused by the gravity of the Moon and the "
                "Sun pulling on the rotating Earth. Most coasts see two high tides and two low tides each day.\n\n"
                "Spring tides, with the largest range, come when the Sun and Moon line up at new and full moon. Neap "
                "tides, with the smallest range, come at the quarter moons when the two pull at right angles.\n",
    "chess.md": "# Chess openings\n\nThe Sicilian Defence answers the king's pawn opening with a pawn to c5 and leads "
                "to sharp, unbalanced games. It is the most popular reply to e4 among strong players.\n\nThe "
                "Queen's Gambit offers a pawn on c4 to gain control of the centre. Black may accept the pawn or "
                "decline it with e6, the solid Orthodox line played in many world championship matches.\n",
    "comets.md": "# Comets\n\nA comet is a ball of ice and dust that orbits the Sun. Near the Sun its ice turns to "
                 "gas and forms a glowing coma and a tail that always points away from the Sun.\n\nHalley's Comet "
                 "returns every seventy-six years; it was last seen from Earth in 1986 and will come back in 2061. "
                 "Short-period comets come from the Kuiper belt beyond Neptune.\n",
}


def _models(tmp_path: Path) -> Path:
    """A models/ folder with MiniLM (copied: training writes beside it) and SmolLM2 (linked), and their entries."""
    models = tmp_path / "models"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "all-MiniLM-L6-v2")
    (models / SMOLLM).symlink_to(MODELS / SMOLLM)
    manifest = Manifest.load(MODELS)
    Manifest(models, {n: manifest.get(n) for n in ("all-MiniLM-L6-v2", SMOLLM)}).save()
    return models


QUERIES = {
    "bees.md": ("How do honey bees survive the winter?", "And how much honey do they store?"),
    "volcano.md": ("Why are stratovolcano eruptions explosive?", "What about shield volcanoes?"),
    "bread.md": ("What makes sourdough bread taste sour?", "How is its starter kept alive?"),
    "tides.md": ("When do spring tides happen?", "And neap tides?"),
    "chess.md": ("What is the Queen's Gambit?", "How can black decline it?"),
}


def _seed_cache(cache: Path, index: Path, leave_out: str) -> None:
    """The LLM cache as an earlier run would have left it: written queries for every chunk but ``leave_out``'s, which
    the real SmolLM2 writes (so the run loads and asks the LLM once, and a rerun asks nothing)."""
    from local_rag.index.folder import read_chunks

    cache.parent.mkdir(parents=True)
    with cache.open("w", encoding="utf-8") as fh:
        for chunk in read_chunks(index):
            doc = chunk.id.split("#")[0]
            if doc != leave_out:
                question, follow_up = QUERIES[doc]
                fh.write(json.dumps({"key": f"{SMOLLM}|synth_queries|{chunk.id}",
                                     "queries": {"question": question, "follow_up": follow_up}}) + "\n")


def _notes_index(tmp_path: Path) -> tuple[Callable[[list[str]], Result], dict[str, str]]:
    """The index ``notes`` over `DOCS`, built for real under ``tmp_path``; the CLI runner with its settings, and them."""
    pytest.importorskip("datasets", reason="the train extra is not installed")
    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    env = {"LOCAL_RAG_MODELS_DIR": str(_models(tmp_path)), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes"),
           "LOCAL_RAG_PROFILE": "cpu-test", "LOCAL_RAG_INDEX": "notes"}

    def run(args: list[str]) -> Result:
        return CliRunner().invoke(cli, args, env=env)

    assert run(["index", "build", str(docs)]).exit_code == 0
    return run, env


@needs_minilm
def test_adapt_writes_queries_trains_measures_and_keeps_only_what_measures_better(tmp_path: Path) -> None:
    run, env = _notes_index(tmp_path)
    from click.testing import CliRunner

    from local_rag.cli.main import cli
    work = tmp_path / "work"
    _seed_cache(work / "synth-cache.jsonl", tmp_path / "indexes" / "notes", leave_out="comets.md")
    args = ["train", "adapt", "--work", str(work), "--passages", "12", "--folds", "0", "--holdout", "0.34",
            "--max-steps", "2", "--batch-size", "4", "--min-heldout", "1"]
    res = run([*args, "--margin", "-1", "--no-interval"])  # any gain keeps it: the chain and its files are tested
    assert res.exit_code == 0, res.output
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    assert len((work / "synth-cache.jsonl").read_text(encoding="utf-8").splitlines()) == 6  # SmolLM2 asked once
    assert report["kept"] and report["model"] == "notes-adapted" and report["training"]["steps"] == 2
    assert report["synth"]["kept"] > 0 and report["rows"]["first stage"]["queries"] == report["synth"]["heldout_queries"] > 0
    assert set(report["rows"]) == {"first stage", "+ all-MiniLM-L6-v2 (stock)", "+ notes-adapted"} and "now answers with it" in res.output
    low, high = report["gain_interval"]
    assert low <= report["gain"] <= high and set(report["over_stock"]) == {"gain", "low", "high"}
    assert "over the first stage (95% interval" in res.output
    settings_file = work / "adapted.yaml"
    adapted = yaml.safe_load(settings_file.read_text(encoding="utf-8"))
    assert adapted["reranker"] == {"backend": "bi-encoder", "model": "notes-adapted", "candidates": 20,
                                   "prior_weight": 1.0, "fallback": "skip"} and adapted["pipeline"]["cross_encoder"]
    # the settings file switches the adapted re-scorer on for a real search
    out = run(["search", "when do spring tides come", "--config", str(settings_file), "--json"]).output
    hits = json.loads(out[out.index("{"):])["hits"]
    assert hits[0]["passage_id"].startswith("tides.md") and "cross-encoder" in hits[0]["scores"]
    # ... and so does the index's own adaptation, with no --config: the index answers with it until told not to
    index_file = tmp_path / "indexes" / "notes.adapted.yaml"
    assert report["adaptation_file"] == str(index_file) and yaml.safe_load(index_file.read_text(encoding="utf-8"))[
        "adapted_by"]["mrr@10"] == [report["rows"]["first stage"]["mrr@10"], report["rows"]["+ notes-adapted"]["mrr@10"]]
    built = json.loads((tmp_path / "indexes" / "notes" / "manifest.json").read_text(encoding="utf-8"))
    assert {k: yaml.safe_load(index_file.read_text(encoding="utf-8"))["adapted_by"][k] for k in ("corpus_hash", "passages")
            } == {"corpus_hash": built["corpus_hash"], "passages": built["passages"]}  # what the check measured
    for flags, rescored in (([], True), (["--no-adaptation"], False), (["--no-cross-encoder"], False)):
        out = run(["search", "when do spring tides come", "--json", *flags]).output
        assert ("cross-encoder" in json.loads(out[out.index("{"):])["hits"][0]["scores"]) is rescored, flags
    info = run(["index", "info"])
    assert "re-scorer notes-adapted (train adapt, held-out MRR@10" in info.output and str(index_file) in info.output
    assert run(["index", "verify"]).exit_code == 0  # beside the folder, not in it: the index's files are unchanged
    banner = CliRunner().invoke(cli, ["chat", "--history", ""], env=env, input="/quit\n").output
    assert "local-rag chat (index notes, profile cpu-test, re-scorer notes-adapted (train adapt" in banner
    # a rerun: every query from the cache, the same data, so no training, and the same figures; a manifest that lost
    # the model's entry (reset by version control) gets it back
    manifest = Manifest.load(tmp_path / "models")
    del manifest.entries["notes-adapted"]
    manifest.save()
    cache = (work / "synth-cache.jsonl").read_bytes()
    res = run([*args, "--margin", "-1", "--no-interval", "--json"])
    assert res.exit_code == 0, res.output
    again = json.loads(res.output)
    assert again["training"]["repeated"] and again["rows"] == report["rows"] and (work / "synth-cache.jsonl").read_bytes() == cache
    assert Manifest.load(tmp_path / "models").get("notes-adapted").role == "embedder"
    # a margin no model meets: not kept, and the earlier settings file goes (it no longer holds)
    res = run([*args, "--margin", "1"])
    assert res.exit_code == 0 and "not kept: held-out MRR@10 gains" in res.output and not settings_file.exists()
    assert "made 2 training steps at batch 4: too few to move the model much; write more with --passages" in res.output
    assert not index_file.exists() and "adaptation" not in run(["index", "info"]).output
    # a check that could keep nothing stops before any fine-tune: the cached queries are fewer than --min-heldout
    res = run(["train", "adapt", "--work", str(work), "--passages", "12", "--name", "notes-small"])
    assert res.exit_code == 2 and "fewer than --min-heldout 20: no model could be kept, so none is trained" in res.output
    assert not (tmp_path / "models" / "notes-small").exists() and "notes-small" not in Manifest.load(tmp_path / "models").entries
    assert (work / "synth-cache.jsonl").read_bytes() == cache  # from the cache: the LLM was not asked
    # bad input: one line, no traceback
    for bad, message in ((["--folds", "0", "--holdout", "0"], "--holdout must be in (0, 1)"),
                         (["--holdout", "0.3"], "--holdout is for --folds 0"), (["--folds", "1"], "--folds must be 0"),
                         (["--kinds", "essay"], "--kinds"),
                         (["--index", "no-such-index"], "no-such-index"),
                         (["--name", "all-MiniLM-L6-v2"], "a model local-rag did not train")):
        res = run(["train", "adapt", "--work", str(tmp_path / "w2"), *bad])
        assert res.exit_code != 0 and message in res.output and "Traceback" not in res.output


@needs_minilm
def test_adapt_cross_validates_over_the_documents_and_reuses_each_fold(tmp_path: Path) -> None:
    """The default check: every written query is ranked by a model trained without its document (three folds of real
    fine-tunes), pooled; the kept model is trained on all; a rerun reuses each fold's ranks; nothing of the fold models
    stays (their folders and query twins are gone)."""
    run, _ = _notes_index(tmp_path)
    models = tmp_path / "models"
    work = tmp_path / "work"
    _seed_cache(work / "synth-cache.jsonl", tmp_path / "indexes" / "notes", leave_out="comets.md")
    twins = set((models / ".query-onnx").iterdir()) if (models / ".query-onnx").is_dir() else set()
    args = ["train", "adapt", "--work", str(work), "--passages", "12", "--folds", "3", "--max-steps", "2",
            "--batch-size", "4", "--min-heldout", "1", "--margin", "-1", "--no-interval", "--loss", "cmnrl"]
    res = run(args)
    assert res.exit_code == 0, res.output
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    synth, folds = report["synth"], report["folds"]
    written = synth["kept"] + synth["dropped"]
    assert synth["heldout_queries"] == 0 and report["config"]["folds"] == 3 and len(folds) == 3
    # every written query measured once, each fold's by a model trained on the other folds' kept queries only
    assert report["rows"]["first stage"]["queries"] == sum(f["queries"] for f in folds) == written > 0
    assert all(f["examples"] < synth["kept"] and f["steps"] == 2 for f in folds)
    assert f"all {written} measured by cross-validation" in res.output and "cross-validated: 3 folds" in res.output
    assert report["kept"] and report["training"]["steps"] == 2 and (models / "notes-adapted").is_dir()
    assert report["training"]["loss"] == "cmnrl" and "steps of cmnrl" in res.output  # the small-memory loss, real
    ranks = json.loads((work / "ranks.json").read_text(encoding="utf-8"))  # the gain re-derives from the ranks
    assert mrr_difference(ranks["first stage"], ranks["adapted"]) == (report["gain"], *report["gain_interval"])
    index_file = tmp_path / "indexes" / "notes.adapted.yaml"
    assert yaml.safe_load(index_file.read_text(encoding="utf-8"))["adapted_by"]["folds"] == 3
    assert not (work / "cv" / "models").exists() and not any(p.name.startswith("fold-") for p in models.iterdir())
    assert set((models / ".query-onnx").iterdir()) == twins  # the fold models' twins went with them
    # a rerun: the same folds, from their files (no fine-tune), the same figures
    stamps = {p.name: p.stat().st_mtime_ns for p in (work / "cv").glob("fold-*.json")}
    res = run([*args, "--json"])
    assert res.exit_code == 0, res.output
    again = json.loads(res.output)
    assert again["rows"] == report["rows"] and again["training"]["repeated"]
    assert {p.name: p.stat().st_mtime_ns for p in (work / "cv").glob("fold-*.json")} == stamps


def test_auto_loss_saves_memory_on_a_small_machine() -> None:
    from local_rag.train.adapt import LOW_MEMORY_GIB, training_loss

    assert training_loss("auto", LOW_MEMORY_GIB - 1) == "cmnrl" and training_loss("auto", LOW_MEMORY_GIB) == "mnrl"
    assert training_loss("mnrl", 4.0) == "mnrl" and training_loss("auto") in ("mnrl", "cmnrl")


def test_folds_split_documents_into_groups_of_about_as_many_queries() -> None:
    from local_rag.errors import BadInputError
    from local_rag.train.synth import SynthQuery, document_folds

    counts = {"a.md": 6, "b.md": 1, "c.md": 3, "d.md": 3, "e.md": 2, "f.md": 1}
    queries = [SynthQuery(f"{doc}#{i}", "question", f"q{i}") for doc, n in counts.items() for i in range(n)]
    groups = document_folds(queries, 3)
    assert len(groups) == 3 and set().union(*groups) == set(counts) and sum(map(len, groups)) == len(counts)
    sizes = sorted(sum(counts[d] for d in g) for g in groups)
    assert sizes == [5, 6, 5] or sizes == [5, 5, 6]  # 16 queries in three groups: the largest document alone
    assert document_folds(queries, 3) == groups  # the same split every run
    assert len(document_folds(queries[:7], 5)) == 2  # two documents: two folds
    for bad, message in ((queries, 1), (queries[:6], 3)):
        with pytest.raises(BadInputError, match="--folds must be 0|two documents or more"):
            document_folds(bad, message)


@pytest.mark.parametrize(("adapted", "n", "low", "interval", "kept", "why"), [
    ({"mrr@10": 0.60, "recall@5": 0.80}, 40, 0.02, True, True, "gains +0.1000 (95% interval from +0.0200"),
    ({"mrr@10": 0.505, "recall@5": 0.80}, 40, 0.001, True, False, "under the margin"),
    ({"mrr@10": 0.60, "recall@5": 0.80}, 40, -0.01, True, False, "not told apart from no change on 40 queries"),
    ({"mrr@10": 0.60, "recall@5": 0.80}, 40, -0.01, False, True, "gains +0.1000"),
    ({"mrr@10": 0.60, "recall@5": 0.70}, 40, 0.02, True, False, "recall@5 falls"),
    ({"mrr@10": 0.90, "recall@5": 0.90}, 5, 0.2, True, False, "too few held-out queries"),
])
def test_the_keep_rule(adapted: dict[str, float], n: int, low: float, interval: bool, kept: bool, why: str) -> None:
    first = {"queries": n, "mrr@10": 0.50, "recall@5": 0.75}
    gain = round(adapted["mrr@10"] - first["mrr@10"], 4)
    decided, reason = _decide(first, {"queries": n, **adapted}, gain, low, AdaptConfig(interval=interval))
    assert decided is kept and why in reason


def test_the_gain_and_its_interval_are_paired_over_the_held_out_queries() -> None:
    assert mrr_difference([1, 0, 2], [1, 0, 2]) == (0.0, 0.0, 0.0)
    gain, low, high = mrr_difference([0] * 10, [1] * 10)  # found first on every query, missing before
    assert (gain, low, high) == (1.0, 1.0, 1.0)
    gain, low, high = mrr_difference([1, 0, 2, 4], [2, 1, 0, 4])  # 1/rank within 10: 1.75/4 against 1.75/4
    assert gain == 0.0 and low < 0 < high
