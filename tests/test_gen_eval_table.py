"""local_rag.evaluation.generation.table (scripts/gen_eval_table.py): the side-by-side row, and copies that leave the MTRAG task texts out of the repo."""

from __future__ import annotations

import json
from pathlib import Path

from local_rag.evaluation.generation import table
from tests.scripts import load_script


def make_run(folder: Path, info: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    overall = {"tasks": 2, "RB_agg_idk": 0.5, "RL_F_idk": 0.75, "RB_llm_idk": None, "final": None,
               "RougeL_stemFalse": 0.25, "citations": 3, "citation_validity": 1.0}
    (folder / "scores.json").write_text(json.dumps({
        "info": info or {"setting": "reference"}, "overall": overall,
        "idk_rate_unanswerable": 1.0, "idk_rate_answerable": 0.0,
    }))
    (folder / "scores.md").write_text("## scores\n")
    record = {"task_id": "c1<::>2", "input": [{"speaker": "user", "text": "SECRET TASK TEXT"}],
              "contexts": [{"text": "SECRET PASSAGE"}], "targets": [{"text": "SECRET REFERENCE"}],
              "predictions": [{"text": "The answer [1]."}], "metrics": {"RougeL_stemFalse": [0.25]},
              "local_rag": {"answerability": "ANSWERABLE", "domain": "clapnq", "turn": 2}}
    (folder / "scored.jsonl").write_text(json.dumps(record) + "\n\n")
    return folder


def test_the_row_shows_the_conditioned_scores_and_na_for_missing_ones(tmp_path):
    run = make_run(tmp_path / "gen-reference-cpu-qwen-answer_plain")
    cells = [c.strip() for c in table.row(run, table.load_scores(run)).strip("|").split("|")]
    assert cells == ["B (gold passages)", "`answer_plain`", "2", "0.500", "0.750", "n/a", "n/a", "0.250",
                     "1.000", "0.000", "1.000 of 3"]
    assert table.load_scores(tmp_path / "missing") is None


def test_the_row_takes_the_recorded_prompt_over_the_folder_name(tmp_path):
    run = make_run(tmp_path / "my-run", {"setting": "rag", "prompt": "answer_plain"})
    cells = [c.strip() for c in table.row(run, table.load_scores(run)).strip("|").split("|")]
    assert cells[:2] == ["C (retrieved)", "`answer_plain`"]


def test_the_copy_keeps_scores_and_answers_but_no_task_text(tmp_path):
    run = make_run(tmp_path / "runs" / "gen-rag-cpu-qwen-answer")
    dest = tmp_path / "docs" / run.name
    table.copy(run, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["answers.jsonl", "scores.json", "scores.md"]
    text = (dest / "answers.jsonl").read_text()
    assert "SECRET" not in text
    answer = json.loads(text)
    assert answer["task_id"] == "c1<::>2" and answer["text"] == "The answer [1]."
    assert answer["local_rag"]["domain"] == "clapnq"


def test_gold_found_counts_task_c_tasks_with_a_gold_passage_among_the_contexts(tmp_path):
    scores = {"RB_agg_idk": [0.5], "RL_F_idk": [1.0], "RB_llm_idk": [0.5]}  # harmonic mean 0.6
    hit = {"task_id": "c1<::>4", "contexts": [{"document_id": "p9"}, {"document_id": "p1"}], "metrics": scores}
    miss = {"task_id": "c1<::>6", "contexts": [{"document_id": "p9"}]}
    unanswerable = {"task_id": "c1<::>8", "contexts": [{"document_id": "p1"}]}
    unknown = {"task_id": "c9<::>2", "contexts": [{"document_id": "p1"}]}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in [
        {"task_id": "c1<::>4", "input": [], "contexts": [{"document_id": "p1"}, {"document_id": "p2"}]},
        {"task_id": "c1<::>6", "input": [], "contexts": [{"document_id": "p3"}]},
        {"task_id": "c1<::>8", "input": [], "contexts": []},
    ]))
    gold = table.load_gold(tasks)
    # c9<::>2 is not in the task file: it counts as a task without gold passages, as c1<::>8 does
    assert table.gold_found([hit, miss, unanswerable, unknown], gold) == "1 of 2 (0.500); harmonic mean 0.600 on those tasks, n/a on the others"
    assert table.gold_found([unanswerable], gold) == "no task with gold passages"
    assert table.load_gold(tmp_path / "missing.jsonl") == {}


def test_the_gold_line_is_printed_for_task_c_runs_only(tmp_path, monkeypatch, capsys):
    script = load_script("gen_eval_table")
    rag = make_run(tmp_path / "gen-rag-x-answer", {"setting": "rag", "prompt": "answer"})
    reference = make_run(tmp_path / "gen-reference-x-answer")  # Task B: the gold passages are given
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "c1<::>2", "input": [], "contexts": [{"document_id": "p1"}]}) + "\n")
    monkeypatch.setattr("sys.argv", ["gen_eval_table.py", "--runs", str(rag), str(reference), "--no-copy",
                                     "--tasks", str(tasks)])
    script.main()
    out = capsys.readouterr().out
    assert "gen-rag-x-answer: of the tasks with gold passages, a gold passage among the contexts in 0 of 1 (0.000)" in out
    assert "gen-reference-x-answer:" not in out
