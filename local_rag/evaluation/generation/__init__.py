"""MTRAG Tasks B and C, scored offline: the official prediction shape and format rules (`official`), RB_alg
(`algorithmic`), the IDK judge (`idk`), RL_F and RB_llm with a local judge model (`judges`), the answerability
conditioning and harmonic mean (`conditioning`), per-task scoring (`scorer`), resumable runs (`runner`) and reports
(`report`).

Nothing heavy is imported here: the BERTScore encoder, rouge-score and the judge model load on first use.
"""

from __future__ import annotations
