"""Clarifying questions built from the passages, without an LLM call, in the three patterns of MTRAG-UN
(Rosenthal et al., 2026, Table 5):

- hedging with answers (2-3 options): each option with a short answer taken from its passage;
- hedging over a list (4-8 options): the options named, nothing more;
- open question (no usable options, or more than the list holds): ask which one is meant.

Each ends with a request to pick one. The options are the distinct titles of the passages (a title is what the
corpus calls the thing the passage is about); the thing asked about comes from the turn ("this ocean" -> ocean).

Example:
    >>> hits = [Hit("a", 1.0, title="Atlantic Ocean", text="The Atlantic drives the Gulf Stream."),
    ...         Hit("b", 0.9, title="Pacific Ocean", text="The Pacific is the largest ocean.")]
    >>> print(clarifying_question("Is this ocean deep?", hits))
    There are several oceans you could mean, such as Atlantic Ocean (the Atlantic drives the Gulf Stream), or Pacific Ocean (the Pacific is the largest ocean). Which one are you referring to?
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from local_rag.decide.turns import STOPWORDS, dangling_references
from local_rag.records import Conversation, Hit, Turn

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TITLE_JUNK = re.compile(r"\s*(?:[-|:]\s*(?:wikipedia|ibm cloud docs?|ibm cloud)|\(disambiguation\))\s*$", re.I)
_DETERMINER = re.compile(r"\b(?:this|that|these|those|the)\s+", re.I)
_VERBS = frozenset("is are was were do does did has have had can could will would should may might play plays "
                   "played operate operates provide provides receive received lead led become became".split())


def clean_title(title: str) -> str:
    """A title without its site's name: 'West Nile Virus | Sierra County, CA - Official Website' -> 'West Nile
    Virus', 'Atlantic Ocean - Wikipedia' -> 'Atlantic Ocean'."""
    title = _TITLE_JUNK.sub("", " ".join(title.split())).strip(" -|:")
    first = title.split(" | ", 1)[0].strip(" -|:")
    return first if len(first) >= 3 else title


def options(hits: Sequence[Hit], limit: int = 8) -> list[str]:
    """The distinct titles of ``hits`` (see `clean_title`), in rank order (at most ``limit``); hits without a title
    give none."""
    out: list[str] = []
    seen: set[str] = set()
    for hit in hits:
        title = clean_title(hit.title)
        key = title.lower()
        if title and key not in seen and len(title) <= 80:
            seen.add(key)
            out.append(title)
        if len(out) == limit:
            break
    return out


def thing_asked(question: str, hits: Sequence[Hit] = ()) -> str:
    """The noun the turn points at without saying which one ('this ocean' -> 'ocean'); two words when the passages
    use them together right after it ('this credit card' -> 'credit card'); '' if none. A plural head ('these
    states') takes no second word: 'these states located' is not a thing. After a name, the noun that follows it
    ('the Grey's Anatomy season' -> 'season'); a name alone is the thing ('the Prime Minister'). Of several phrases,
    the first whose thing the passages' titles name ('the role of the Prime Minister' -> 'Prime Minister')."""
    conversation = Conversation([Turn("user", question)])
    lower = question.lower()
    starts = [lower.find(p) for p in dangling_references(conversation)] or [m.start() for m in _DETERMINER.finditer(question)]
    passages = " ".join(f"{h.title} {h.text}" for h in hits).lower()
    titles = " ".join(h.title for h in hits).lower()
    found = [thing for start in starts if start >= 0 for thing in _things(question[start:].split()[1:5], passages)]
    for thing in found:
        if re.search(rf"\b{re.escape(_singular(thing.lower()))}", titles):
            return thing
    return found[0] if found else ""


def _things(words: list[str], passages: str) -> list[str]:
    """The things the words after a 'the/this' may name, the longer first (see `thing_asked`)."""
    words = [w.strip(",.;:?!") for w in words]
    name = []
    for w in words:
        if not w[:1].isupper():
            break
        name.append(w)
    if name:
        rest = words[len(name):]
        noun = rest[0].lower() if rest and rest[0].isalpha() else ""
        out = [noun] if noun and noun not in STOPWORDS and noun not in _VERBS and not re.search(r"(ed|ing)$", noun) else []
        return out + ([" ".join(name)] if len(name) <= 3 else [])
    head = words[0] if words else ""
    if not head or head.lower() in _VERBS or head.lower() in STOPWORDS:
        return []
    out = []
    nxt = words[1].lower() if len(words) > 1 else ""
    if (nxt and not _is_plural(head) and nxt not in STOPWORDS and nxt not in _VERBS
            and f"{head} {nxt}".lower() in passages):
        out.append(f"{head} {nxt}".lower())
    return [*out, head.lower()]


def _singular(noun: str) -> str:
    last = noun.rsplit(" ", 1)[-1]
    if _is_plural(last):
        noun = noun[: -1]
    return noun


def _is_plural(word: str) -> bool:
    return bool(re.search(r"[^su]s$", word.lower())) and len(word) > 3


def plural(noun: str) -> str:
    """A plain English plural of the last word ('ocean' -> 'oceans', 'company' -> 'companies')."""
    if not noun:
        return "options"
    head, _, last = noun.rpartition(" ")
    if _is_plural(last):
        return noun
    if re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", last):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def short_answer(hit: Hit, words: int = 18) -> str:
    """The first whole sentence of a passage, cut to ``words`` words, without its final stop (an article starting it
    in lower case, as it follows a parenthesis). A chunk that starts mid-sentence ('than 1,900 people have died.')
    gives its next sentence."""
    text = " ".join(hit.text.split())
    sentences = _SENTENCE.split(text, maxsplit=2) if text else [""]
    first = sentences[0]
    if len(sentences) > 1 and first[:1].islower():
        first = sentences[1]
    tokens = first.split()
    cut = " ".join(tokens[:words]) + ("..." if len(tokens) > words else "")
    cut = cut.rstrip(".!?;:,")
    first_word = cut.split(" ", 1)[0]
    return cut[:1].lower() + cut[1:] if first_word in {"The", "A", "An", "It", "This", "These", "In", "On"} else cut


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", or " + items[-1]


def clarifying_question(question: str, hits: Sequence[Hit], max_options: int = 8) -> str:
    """The clarifying question for ``question`` from its passages (see the module docstring)."""
    thing = thing_asked(question, hits)
    found = options(hits, limit=max_options + 1)
    if 2 <= len(found) <= 3:
        by_title: dict[str, Hit] = {}
        for hit in hits:
            by_title.setdefault(clean_title(hit.title).lower(), hit)
        parts = []
        for title in found:
            answer = short_answer(by_title[title.lower()])
            parts.append(f"{title} ({answer})" if answer else title)
        return (f"There are several {plural(thing)} you could mean, such as {_join(parts)}. "
                "Which one are you referring to?")
    if 4 <= len(found) <= max_options:
        return f"There are many {plural(thing)} you could be talking about, like {_join(found)}. Which one are you referring to?"
    if thing:
        return f"Which {thing} are you referring to?"
    return "Could you tell me which one you mean, or say a little more about what you are looking for?"
