"""Fine-tuning the generator: examples built by the real pipeline (a real bm25 index, the real compressor and
generator prompt), and a real LoRA run of SmolLM2-135M (its GGUF, loaded by transformers) back to a GGUF that
llama.cpp loads and answers with (slow)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from local_rag.index import build_index
from local_rag.modes import make_pipeline
from local_rag.records import Conversation, Turn
from local_rag.train.generator import GeneratorExample, build_examples, read_examples

from .conftest import CORPUS, make_settings, write_jsonl
from .llm_fixtures import MODELS, ScriptedLLM


def task(task_id: str, question: str, answer: str, gold: list[str], answerability: str = "ANSWERABLE") -> dict[str, Any]:
    """A generation task in MTRAG's shape (the gold contexts in MTRAG's field names)."""
    contexts = [{"document_id": d["_id"], "title": d["title"], "text": d["text"], "url": d["url"]}
                for d in CORPUS if d["_id"] in gold]
    return {"task_id": task_id, "domain": "test", "answerability": [answerability], "contexts": contexts,
            "input": [{"speaker": "user", "text": "Tell me about pets."}, {"speaker": "agent", "text": "Sure."},
                      {"speaker": "user", "text": question}],
            "targets": [{"speaker": "agent", "text": answer}]}


TASKS = [
    task("t::1", "How long does a cat sleep?", "A cat sleeps twelve to sixteen hours a day.", ["d1-1"]),
    task("t::2", "What is FAISS for?", "FAISS is a library for similarity search of dense vectors.", ["d4-0"]),
    task("t::3", "What do parrots eat?", "", [], "UNANSWERABLE"),
    task("t::4", "Thanks!", "You're welcome.", [], "CONVERSATIONAL"),
]


def test_examples_are_the_pipelines_own_prompt_with_the_gold_passage_and_a_cited_reference(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, dense={"enabled": False}, retrieval={"retrievers": ["bm25"]},
                             chunker={"tokenizer": "whitespace", "size": 200, "overlap": 20},
                             pipeline={"rewrite": False}, evidence={"compress": True, "budget_tokens": 40},
                             generate={"passages": 3})
    build_index(settings, write_jsonl(tmp_path / "corpus.jsonl", CORPUS), progress=False)
    llm = ScriptedLLM("unused")
    pipeline = make_pipeline(settings, llm=llm)
    examples = list(build_examples(TASKS, settings, lambda t: pipeline))
    assert [e.task_id for e in examples] == ["t::1", "t::2", "t::3"]  # the conversational turn is skipped
    cat, faiss, parrot = examples
    assert llm.seen == []  # building examples never asks the LLM to write
    # the prompt is the generator's own, over the compressed evidence of gold + retrieved passages
    prompt = cat.messages[-1]["content"]
    assert "How long does a cat sleep?" in prompt and "twelve to sixteen hours" in prompt
    assert cat.messages[0]["role"] == "system" and cat.gold_in_evidence == 1
    n = next(line for line in prompt.splitlines() if "twelve to sixteen" in line)[1]
    assert cat.target == f"A cat sleeps twelve to sixteen hours a day [{n}]." and cat.kind == "answer"
    assert cat.support == 1.0 and faiss.support > 0.5
    assert parrot.kind == "decline" and parrot.target == settings.generate.idk_answer
    # the same pipeline prompt as at inference
    conversation = Conversation([Turn("user", "Tell me about pets."), Turn("agent", "Sure."),
                                 Turn("user", "How long does a cat sleep?")])
    assert cat.messages[:-1] == pipeline.generator.messages(conversation, [])[:-1]
    # JSONL round trip
    path = tmp_path / "examples.jsonl"
    path.write_text("".join(e.to_json() + "\n" for e in examples), encoding="utf-8")
    assert read_examples(path) == examples


@pytest.mark.slow
def test_a_lora_run_of_smollm2_goes_back_to_a_gguf_that_llama_cpp_answers_with(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    pytest.importorskip("gguf")
    from local_rag.train.generator import GeneratorTraining, to_gguf, train_generator

    found = sorted((MODELS / "smollm2-135m-instruct").glob("*.gguf"))
    if not found:
        pytest.skip("smollm2-135m-instruct is not in models/")
    system = {"role": "system", "content": "Answer from the passages."}
    examples = [GeneratorExample(f"t{i}", [system, {"role": "user", "content": f"Passages:\n[1] {d['text']}\n\nQuestion: {q}"}],
                                 f"{a} [1].", "answer", 1, 1.0)
                for i, (d, q, a) in enumerate([(CORPUS[1], "How long does a cat sleep?", "Twelve to sixteen hours"),
                                               (CORPUS[3], "What is BM25?", "A ranking function")])]
    config = GeneratorTraining(model=str(found[0]), out=str(tmp_path / "run"), max_steps=2, grad_accum=1,
                               max_length=256, save_steps=1, top_layers=4)
    folder = train_generator(config, examples)
    history = [h for h in __import__("json").loads((tmp_path / "run" / "log_history.json").read_text()) if "loss" in h]
    assert len(history) == 2 and all(math.isfinite(float(h["loss"])) for h in history)
    assert (folder / "config.json").exists()
    converter = os.environ.get("LLAMA_CPP_CONVERTER", "")
    if not Path(converter).is_file():
        pytest.skip("llama.cpp's convert_hf_to_gguf.py not given ($LLAMA_CPP_CONVERTER): the merged model was saved")
    gguf = to_gguf(folder, tmp_path / "tuned.gguf", converter, "Q8_0")
    from llama_cpp import Llama

    llm = Llama(model_path=str(gguf), n_ctx=512, verbose=False)
    out = llm.create_chat_completion([system, {"role": "user", "content": "What is BM25?"}], max_tokens=8, temperature=0)
    assert out["choices"][0]["message"]["content"].strip()


def test_no_examples_is_a_clear_error_before_any_model_is_loaded(tmp_path: Path) -> None:
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.errors import BadInputError
    from local_rag.train.generator import GeneratorTraining, train_generator

    with pytest.raises(BadInputError, match="no training examples"):
        train_generator(GeneratorTraining(model=str(tmp_path / "absent.gguf"), out=str(tmp_path / "run")), [])
    assert not (tmp_path / "run").exists()


def test_a_bad_quantization_type_is_a_clear_error_before_training(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    converter = tmp_path / "convert_hf_to_gguf.py"
    converter.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["train", "generator", "--name", "x", "--work", str(tmp_path / "work"),
                                      "--converter", str(converter), "--qtype", "Q3_FANCY"])
    assert result.exit_code == 2 and "unknown llama.cpp quantization type 'Q3_FANCY'" in result.output
    assert not (tmp_path / "work").exists()
