"""Meeting and video transcripts: WebVTT (``.vtt``: Microsoft Teams, Zoom, Google Meet, YouTube) and SubRip (``.srt``)
captions, read into paragraphs a reader can quote (`local_rag.corpus.documents`).

A caption file is a list of cues, a few words each, with their timings: searched as they are, a chunk would be half
timestamps, and a sentence split over three cues. Here cues become paragraphs: the consecutive cues of one speaker
joined (a ``<v Ann Smith>`` voice tag, or Zoom's ``Ann Smith:`` prefix), or, without speakers, the cues of about a
minute; each paragraph opens with the time it begins (``[12:31]``), so an answer's source says where to look in the
recording. Styling tags and inline timestamps are dropped; the repeated lines of rolling captions (YouTube's
automatic ones) are kept once.

Example:
    >>> transcript_lines("WEBVTT\\n\\n00:00:01.000 --> 00:00:03.000\\n<v Ann>Good morning.\\n\\n"
    ...                  "00:00:03.000 --> 00:00:05.000\\n<v Ann>Shall we start?</v>\\n\\n"
    ...                  "00:01:02.500 --> 00:01:04.000\\n<v Bob>Yes.")
    ['[0:01] Ann: Good morning. Shall we start?', '[1:02] Bob: Yes.']
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

__all__ = ["transcript_lines"]

_TIMING = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})\s*-->\s*")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)*\s+([^>]+)>")
_NAMED = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}):\s+(\S.*)$")  # Zoom: "Ann Smith: Good morning"
_TAG = re.compile(r"<[^>]*>")
WINDOW = 60.0  # seconds of cues without speakers joined into one paragraph
MAX_CHARS = 1200  # a paragraph is cut after this many characters (a monologue), at a cue


@dataclass
class _Paragraph:
    start: float
    speaker: str
    parts: list[str]


def transcript_lines(text: str) -> list[str]:
    """One line per paragraph of the captions in ``text`` (a ``.vtt`` or ``.srt`` file's text), its start time first;
    [] when it holds no cue."""
    paragraphs: list[_Paragraph] = []
    for block in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        lines = [line.strip() for line in block.strip().split("\n")]
        at = next((i for i, line in enumerate(lines) if _TIMING.match(line)), None)
        if at is None:  # the WEBVTT header, a NOTE, STYLE or REGION block
            continue
        hours, minutes, seconds, fraction = _TIMING.match(lines[at]).groups()  # type: ignore[union-attr]
        start = int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(fraction) / 10 ** len(fraction)
        body = " ".join(line for line in lines[at + 1:] if line)
        voice = _VOICE.search(body)
        speaker = voice.group(1).strip() if voice else ""
        words = " ".join(html.unescape(_TAG.sub("", body)).split())
        if not speaker and (named := _NAMED.match(words)):
            speaker, words = named.group(1), named.group(2)
        if not words:
            continue
        last = paragraphs[-1] if paragraphs else None
        if last is not None and last.parts and speaker == last.speaker and (
                words == last.parts[-1] or last.parts[-1].endswith(words)):
            continue  # a rolling caption's repeated line
        if (last is None or speaker != last.speaker or sum(map(len, last.parts)) > MAX_CHARS
                or (not speaker and start - last.start > WINDOW)):
            paragraphs.append(_Paragraph(start, speaker, []))
        paragraphs[-1].parts.append(_new_words(paragraphs[-1].parts, words))
    return [f"[{_clock(p.start)}] {p.speaker + ': ' if p.speaker else ''}{' '.join(w for w in p.parts if w)}"
            for p in paragraphs if any(p.parts)]


def _new_words(parts: list[str], words: str) -> str:
    """``words`` less the words the last cue ended with (a rolling caption repeats its last line at its start)."""
    if not parts:
        return words
    before, now = parts[-1].split(), words.split()
    for size in range(min(len(before), len(now) - 1), 0, -1):
        if before[-size:] == now[:size]:
            return " ".join(now[size:])
    return words


def _clock(seconds: float) -> str:
    """``12:31`` or ``1:02:03``.

    Example:
        >>> _clock(751.4), _clock(3723.0)
        ('12:31', '1:02:03')
    """
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
