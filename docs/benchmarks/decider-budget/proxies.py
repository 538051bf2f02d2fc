"""Issue 24, session 24: two cheap proxies for clarify recall, measured before building anything (not kept).

1. Ambiguity in the conversation (MTRAG-UN's multi-turn UNDERSPECIFIED turns: "What is the current price of the
   bond?" after "0% yield bond", "zero-coupon bond", "par value of a bond"): the most distinct words the earlier
   turns put right before a word of the last turn (``history_family``), and the same for the heads of its
   "the/this/that X" phrases only (``definite_family``): AUC of UNDERSPECIFIED against answerable turns.
2. Topic continuity, for the same turns and for UNANSWERABLE ones: the MiniLM cosine of the last turn with the
   closest earlier user turn and with the last agent turn (AUC either way; and on multi-turn conversations only).
3. A second embedding beside the turn's, in `lr-features+embedding` and `lr-embedding`: the previous user turn
   (``prev``) or the distinct titles of the top 5 hits (``titles``), at the decider's default thresholds.
4. Weighting the real (MTRAG-UN) UNDERSPECIFIED turns 3x and 6x in training (the synthetic ones outnumber them 6 to
   1): the decider's figures at the pool's thresholds, as `local-rag train decider` measures them.

Run from the repository root after `docs/benchmarks/decider-budget/run.sh` (the evidence cache in runs/i24-decider):
    .venv/bin/python docs/benchmarks/decider-budget/proxies.py > docs/benchmarks/decider-budget/proxies.txt
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from local_rag.cli.main import load
from local_rag.decide.turns import content_words, earlier_text, words
from local_rag.mtrag import default_mtrag_dir
from local_rag.train import decider as D

DEFINITE = re.compile(r"\b(?:the|this|that|these|those)\s+(?:\w+\s+)?([a-z][a-z'-]+)", re.I)


def norm(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def family(conversation, heads: set[str]) -> int:
    before = earlier_text(conversation)
    tokens = [norm(t.strip("'.-")) for t in words(before)]
    topical = set(content_words(before))
    mods: dict[str, set[str]] = {}
    for a, b in zip(tokens, tokens[1:], strict=False):
        if b in heads and a in topical and a != b:
            mods.setdefault(b, set()).add(a)
    return min(6, max((len(v) for v in mods.values()), default=0))


def proxies(sets) -> None:
    dev = sets["dev"]
    gold = np.array([e.gold for e in dev])
    keep = np.isin(gold, ("UNDERSPECIFIED", "ANSWERABLE", "PARTIAL"))
    for name, heads in (("history_family", lambda c: set(content_words(c.last_user_turn))),
                        ("definite_family", lambda c: {norm(m.group(1).lower()) for m in DEFINITE.finditer(c.last_user_turn)})):
        v = np.array([family(e.conversation, heads(e.conversation)) for e in dev])
        print(f"{name}: MTRAG-UN dev AUC UNDERSPECIFIED vs answerable {roc_auc_score(gold[keep] == 'UNDERSPECIFIED', v[keep]):.3f}; "
              f"mean {v[gold == 'UNDERSPECIFIED'].mean():.2f} (UNDERSPECIFIED) vs {v[np.isin(gold, D.ANSWERABLE)].mean():.2f}")


def continuity(sets, settings) -> None:
    embed = D.embedder_function(settings)
    for name in ("dev", "test"):
        examples = sets[name]
        last = embed([e.conversation.last_user_turn for e in examples])
        users = [[t.text for t in e.conversation.turns[:-1] if t.speaker == "user"] for e in examples]
        agents = [[t.text for t in e.conversation.turns[:-1] if t.speaker != "user"] for e in examples]
        feats = {"max_cos_earlier_user": np.array([float(max(embed(u) @ v)) if u else 1.0 for u, v in zip(users, last, strict=True)]),
                 "cos_last_agent": np.array([float((embed(a[-1:]) @ v)[0]) if a else 1.0 for a, v in zip(agents, last, strict=True)])}
        gold = np.array([e.gold for e in examples])
        multi = np.array([bool(u) for u in users])
        for feature, values in feats.items():
            for cls in ("UNDERSPECIFIED", "UNANSWERABLE"):
                for label, where in (("all", np.ones(len(gold), bool)), ("multi-turn", multi)):
                    keep = np.isin(gold, (cls, *D.ANSWERABLE)) & where
                    if (gold[keep] == cls).any():
                        auc = roc_auc_score(gold[keep] == cls, values[keep])
                        print(f"{feature}: {name} {cls} vs answerable ({label}, {int((gold[keep] == cls).sum())} / "
                              f"{int(keep.sum())}): AUC {max(auc, 1 - auc):.3f} ({'higher' if auc > 0.5 else 'lower'} for {cls})")


def weighted(sets, settings, weight: float, variant: str) -> dict:
    """`decider.measure` with the real UNDERSPECIFIED turns weighted ``weight`` in every fit."""
    pool = sets["train"] + sets["synthetic"] + sets["dev"]
    names = D.NO_CE_FEATURES
    embed = D.embedder_function(settings) if "embedding" in variant else None
    mats = {k: D.matrices(v, embed, names) for k, v in (("pool", pool), ("test", sets["test"]))}
    mats["names"] = names

    def fit(v, x, examples, seed=0):
        w = np.array([weight if e.gold == "UNDERSPECIFIED" and e.source != "synthetic" else 1.0 for e in examples])
        y = np.array([D.trained_kind(e) for e in examples])
        model = D.make_model(v, seed)
        return model.fit(x, y, sample_weight=w) if v.startswith("gbm") else model.fit(x, y, logisticregression__sample_weight=w)

    def out_of_fold(v, x, examples, folds=5, seed=0):
        from sklearn.model_selection import GroupKFold

        out = np.zeros((len(examples), len(D.CLASSES)))
        for train, held in GroupKFold(n_splits=folds).split(x, groups=[e.group for e in examples]):
            out[held] = D.proba_frame(fit(v, x[train], [examples[i] for i in train], seed), x[held], D.CLASSES)
        return out

    saved = D.out_of_fold, D.fit
    D.out_of_fold, D.fit = out_of_fold, fit
    try:
        return D.measure(variant, pool, sets["test"], sets["dev"], mats, 5, 0)
    finally:
        D.out_of_fold, D.fit = saved


def with_context(sets, settings, which: str) -> None:
    """`decider.measure` of the embedding variants with a second MiniLM embedding appended: the previous user turn
    (``prev``) or the top 5 hits' distinct titles (``titles``)."""
    pool = sets["train"] + sets["synthetic"] + sets["dev"]
    names = D.NO_CE_FEATURES
    embed = D.embedder_function(settings)

    def context(examples):
        texts = []
        for e in examples:
            users = [t.text for t in e.conversation.turns[:-1] if t.speaker == "user"]
            texts.append(users[-1] if which == "prev" and users else
                         "; ".join(dict.fromkeys(h.title for h in e.hits[:5])) if which == "titles" else "")
        return np.asarray(embed([t or "-" for t in texts]), dtype=np.float32)

    mats = {}
    for key, examples in (("pool", pool), ("test", sets["test"])):
        named, turn = D.matrices(examples, embed, names)
        mats[key] = (named, np.hstack([turn, context(examples)]))
    mats["names"] = names
    for variant in ("lr-features+embedding", "lr-embedding"):
        r = D.measure(variant, pool, sets["test"], sets["dev"], mats, 5, 0)
        t, d = r["test"], r["dev_cv"]
        print(f"{variant} + {which} embedding: MTRAG-UN dev CV decline {d['decline_unanswerable']:.3f} @ "
              f"{d['decline_answerable']:.3f}, clarify {d['clarify_underspecified']:.3f} @ {d['clarify_answerable']:.3f}; "
              f"test decline {t['decline_unanswerable']:.3f} @ {t['decline_answerable']:.3f}, clarify @ "
              f"{t['clarify_answerable']:.3f}; AUC dev {r['auc']['dev_cv']}, test decline {r['auc']['test']['decline']}")


def main() -> None:
    settings = load(None, None, None)
    sets = D.load_examples(default_mtrag_dir(), 150, ("clapnq", "cloud", "fiqa", "govt"))
    D.with_evidence(sets, settings, "mtrag-", "i24-mtrag-", Path("runs/i24-decider/evidence.jsonl"))
    D.with_cross_encoder(sets, settings, Path("runs/i24-decider/cross-encoder.jsonl"))
    proxies(sets)
    continuity(sets, settings)
    for which in ("prev", "titles"):
        with_context(sets, settings, which)
    for variant in ("gbm-features", "lr-features+embedding"):
        for weight in (1.0, 3.0, 6.0):
            r = weighted(sets, settings, weight, variant)
            t, d = r["test"], r["dev_cv"]
            print(f"{variant} weight {weight:g}: MTRAG-UN dev CV decline {d['decline_unanswerable']:.3f} @ {d['decline_answerable']:.3f}, "
                  f"clarify {d['clarify_underspecified']:.3f} @ {d['clarify_answerable']:.3f}; test decline "
                  f"{t['decline_unanswerable']:.3f} @ {t['decline_answerable']:.3f}, clarify @ {t['clarify_answerable']:.3f}; "
                  f"clarify AUC dev {r['auc']['dev_cv']['clarify']}")


if __name__ == "__main__":
    main()
