"""The decision stage: answer, decline, clarify or chitchat, between reranking and generation.

`Decider.decide(conversation, evidence) -> Decision` (`local_rag.records.Decision`); `load_decider` gives the trained
model of ``settings.decide`` or, without one, `AlwaysAnswer`. Clarifying questions are built from the passages
(`local_rag.decide.clarify`), small talk is answered by rules (`local_rag.decide.turns`).
"""

from local_rag.decide.model import AlwaysAnswer, Decider, TrainedDecider, load_decider, reply_text

__all__ = ["AlwaysAnswer", "Decider", "TrainedDecider", "load_decider", "reply_text"]
