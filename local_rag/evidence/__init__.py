"""What the generator is given: evidence compressed to the sentences that matter (`compress`)."""

from local_rag.evidence.compress import Selection, select_sentences
from local_rag.text import split_sentences

__all__ = ["Selection", "select_sentences", "split_sentences"]
