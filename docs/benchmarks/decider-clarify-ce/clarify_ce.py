"""Issue 24, session 24: a fine-tuned MiniLM pair classifier for "clarify" (the issue's "classifier head on MiniLM
over (conversation, top passages)"), measured against the decider's frozen-embedding variants before building it
into the decision stage.

Input pair: the last user turn; the previous user turn and the distinct titles of the top 5 hits (the evidence the
decider already has). Label: UNDERSPECIFIED (1) against every other turn (0). A sentence-transformers CrossEncoder
from all-MiniLM-L6-v2 (a new head), BinaryCrossEntropyLoss, CrossEncoderTrainer: 5-fold cross-validation grouped by
conversation over the decider's pool (MTRAG train, synthetic underspecified turns, MTRAG-UN dev), then one model on
the whole pool for the MTRAG test split. Thresholds as `train decider` sets them: the quantile of the pool's
answerable out-of-fold scores at the clarify budget.

Run from the repository root after docs/benchmarks/decider-budget/run.sh (the evidence cache in runs/i24-decider):
    .venv/bin/python docs/benchmarks/decider-clarify-ce/clarify_ce.py > docs/benchmarks/decider-clarify-ce/report.txt
    .venv/bin/python docs/benchmarks/decider-clarify-ce/clarify_ce.py 4 1e-4 >> docs/benchmarks/decider-clarify-ce/report.txt
Writes predictions.jsonl (task id, split, gold, P(clarify)) beside it (predictions-4-0.0001.jsonl for the second).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from local_rag.cli.main import load
from local_rag.decide.features import title_key
from local_rag.mtrag import default_mtrag_dir
from local_rag.train import decider as D

HERE = Path(__file__).parent
EPOCHS, BATCH, LR, MAX_LENGTH, SEED = 2, 16, 5e-5, 128, 12
if len(sys.argv) == 3:  # clarify_ce.py EPOCHS LR: another schedule, its predictions in predictions-<epochs>-<lr>.jsonl
    EPOCHS, LR = int(sys.argv[1]), float(sys.argv[2])


def pair(e) -> tuple[str, str]:
    users = [t.text for t in e.conversation.turns[:-1] if t.speaker == "user"]
    titles = list(dict.fromkeys(h.title or title_key(h) for h in e.hits[:5]))
    return e.conversation.last_user_turn, f"before: {users[-1] if users else '-'} || passages: {'; '.join(titles)}"


def fit(rows, base: str):
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    torch.manual_seed(SEED)
    model = CrossEncoder(base, num_labels=1, max_length=MAX_LENGTH, device="cpu", local_files_only=True)
    a, b = zip(*(pair(e) for e in rows), strict=True)
    data = Dataset.from_dict({"sentence1": list(a), "sentence2": list(b),
                              "label": [float(e.gold == "UNDERSPECIFIED") for e in rows]})
    work = tempfile.mkdtemp(prefix="clarify-ce-")
    args = CrossEncoderTrainingArguments(output_dir=work, num_train_epochs=EPOCHS, per_device_train_batch_size=BATCH,
                                         learning_rate=LR, warmup_steps=0.1, seed=SEED, save_strategy="no",
                                         report_to=[], disable_tqdm=True, logging_steps=50)
    CrossEncoderTrainer(model=model, args=args, train_dataset=data, loss=BinaryCrossEntropyLoss(model)).train()
    shutil.rmtree(work, ignore_errors=True)
    return model


def scores(model, rows) -> np.ndarray:
    return np.asarray(model.predict([pair(e) for e in rows], batch_size=64, show_progress_bar=False), dtype=float)


def figures(name: str, p: np.ndarray, gold: np.ndarray, threshold: float) -> str:
    und, ans = p[gold == "UNDERSPECIFIED"], p[np.isin(gold, D.ANSWERABLE)]
    auc = roc_auc_score(np.r_[np.ones(len(und)), np.zeros(len(ans))], np.r_[und, ans]) if len(und) else None
    return (f"{name}: clarify UNDERSPECIFIED {np.mean(und >= threshold):.3f} ({int((und >= threshold).sum())}/{len(und)})"
            if len(und) else f"{name}:") + f", answerable {np.mean(ans >= threshold):.3f}" + (f", AUC {auc:.3f}" if auc else "")


def main() -> None:
    started = time.perf_counter()
    settings = load(None, None, None)
    base = str(Path(settings.models_dir) / "all-MiniLM-L6-v2")
    sets = D.load_examples(default_mtrag_dir(), 150, ("clapnq", "cloud", "fiqa", "govt"))
    D.with_evidence(sets, settings, "mtrag-", "i24-mtrag-", Path("runs/i24-decider/evidence.jsonl"))
    D.with_cross_encoder(sets, settings, Path("runs/i24-decider/cross-encoder.jsonl"))
    pool, test = sets["train"] + sets["synthetic"] + sets["dev"], sets["test"]
    gold = np.array([e.gold for e in pool])
    oof = np.zeros(len(pool))
    for k, (train, held) in enumerate(GroupKFold(n_splits=5).split(np.zeros(len(pool)), groups=[e.group for e in pool])):
        model = fit([pool[i] for i in train], base)
        oof[held] = scores(model, [pool[i] for i in held])
        print(f"fold {k + 1}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    model = fit(pool, base)
    p_test = scores(model, test)
    dev = np.array([e.source == "mtragun-dev" for e in pool])
    real = np.array([e.source != "synthetic" for e in pool])
    answerable = np.isin(gold, D.ANSWERABLE)
    gold_test = np.array([e.gold for e in test])
    print(f"# fine-tuned MiniLM clarify classifier ({EPOCHS} epochs, batch {BATCH}, lr {LR}, max_length {MAX_LENGTH}); "
          f"pool {len(pool)}, test {len(test)}; wall {time.perf_counter() - started:.0f} s")
    for budget in (0.04, 0.05, 0.08):
        t = float(np.quantile(oof[answerable], 1 - budget))
        print(f"budget {budget} (threshold {t:.3f}) | " + " | ".join([
            figures("pool CV, real turns", oof[real], gold[real], t),
            figures("MTRAG-UN dev CV", oof[dev], gold[dev], t),
            figures("MTRAG test", p_test, gold_test, t)]))
    out = HERE / ("predictions.jsonl" if len(sys.argv) != 3 else f"predictions-{EPOCHS}-{LR:g}.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for split, rows, p in (("dev", [e for e in pool if e.source == "mtragun-dev"], oof[dev]), ("test", test, p_test)):
            for e, v in zip(rows, p, strict=True):
                fh.write(json.dumps({"split": split, "task_id": e.id, "gold": e.gold, "p_clarify": round(float(v), 4)}) + "\n")


if __name__ == "__main__":
    main()
