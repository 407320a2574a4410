"""What "the second one" or "the two" points at: an item of the list the previous answer gave.

"Which four functions make up the AI RMF Core?" is answered "... the Core is composed of four
functions: GOVERN, MAP, MEASURE, and MANAGE."; "What does the second one do?" asks about MAP.
The words of the whole list are in the context a follow-up borrows, so without this the answer
is the sentence naming the whole list again. This module finds the lists an answer gives (the
items after a colon, up to the end of the sentence: "A, B, and C" or "A and B"), picks the one
the previous question counted ("which four ...") or else the first, and returns the item an
ordinal names ("the first one", "the second", "the last one", "the latter"), or every item for
"the two", "both" or "which of the three". Deterministic, English, no model: records in, words
out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Referred", "answer_lists", "referred_items"]

_ORDINALS = {
    "first": 0,
    "former": 0,
    "second": 1,
    "third": 2,
    "fourth": 3,
    "fifth": 4,
    "sixth": 5,
    "last": -1,
    "latter": -1,
}
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
#: "the second one", "the first of them", "the first of those Tiers", "the latter", "the
#: second?" (an ordinal with no noun of its own: "the first number" names its own noun and is
#: left to the words).
_ORDINAL = re.compile(
    r"\bthe\s+(first|second|third|fourth|fifth|sixth|last|former|latter)"
    r"(?:\s+(?:one|ones|of\s+them|of\s+(?:those|these)(?:\s+\w+s)?)\b|(?=\s*[?.,;!]|\s*$))",
    re.IGNORECASE,
)
#: "of the two", "the three of them", "the two?", "both of them", "both?" (not "both documents").
_ALL = re.compile(
    r"\b(?:(?<=of\s)(?:the|these|those)\s+(two|three|four|five|six)\b"
    r"|(?:the|these|those)\s+(two|three|four|five|six)(?:\s+of\s+them\b|(?=\s*[?.,;!]|\s*$))"
    r"|both(?:\s+of\s+them\b|(?=\s*[?.,;!]|\s*$)))",
    re.IGNORECASE,
)
_MARKER = re.compile(r"\s*\[\d+\]")
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")
_MAX_ITEM_WORDS = 5
_MAX_ITEMS = 8


def _commas(segment: str) -> list[str]:
    """``segment`` split at its commas outside parentheses ("Partial (Tier 1), Risk ...")."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(segment):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth <= 0:
            parts.append(segment[start:i])
            start = i + 1
    return [*parts, segment[start:]]


def _items(segment: str) -> list[str]:
    """The items of one enumeration: "A, B, and C", "A, B and C" (commas first), or "A and B"."""
    if "," in segment:
        parts = [p.strip() for p in _commas(segment)]
        last = re.split(r"\s+(?:and|or)\s+", parts[-1], maxsplit=1)
        if not re.match(r"(?:and|or)\s", parts[-1], re.IGNORECASE) and len(last) == 2:
            parts[-1:] = last  # "a leaf, a stem and a root": no comma before the last
        parts = [re.sub(r"^(?:and|or)\s+", "", p, flags=re.IGNORECASE) for p in parts]
    else:
        parts = re.split(r"\s+(?:and|or)\s+", segment.strip())
    parts = [p.strip(" \"'") for p in parts]
    if not 2 <= len(parts) <= _MAX_ITEMS:
        return []
    if any(not p or len(p.split()) > _MAX_ITEM_WORDS for p in parts):
        return []
    return parts


def answer_lists(answer: str) -> list[list[str]]:
    """The lists an answer gives, in order: the items after each colon, to the sentence end."""
    text = _MARKER.sub("", answer)
    out: list[list[str]] = []
    for colon in re.finditer(r":\s", text):
        rest = text[colon.end() :]
        end = _SENTENCE_END.search(rest)
        items = _items(rest[: end.start()] if end else rest)
        if items:
            out.append(items)
    return out


def _counted(question: str) -> int | None:
    """How many things the question asked for ("Which four functions ...": 4), if it says."""
    for word in re.findall(r"[a-z]+", question.casefold()):
        if word in _COUNTS:
            return _COUNTS[word]
    return None


@dataclass(frozen=True, slots=True)
class Referred:
    """What a follow-up's ordinal points at: the ``named`` items, the list's ``others``, and the
    ``question`` with the ordinal replaced by the items ("What does MAP do?")."""

    named: tuple[str, ...]
    others: tuple[str, ...]
    question: str


def referred_items(question: str, previous_question: str, previous_answer: str) -> Referred:
    """The items of the previous answer's list that ``question`` points at ("the second one":
    the second item; "the two": all of them), the list's other items, and the question with
    the items in the ordinal's place; nothing named (and the question as it is) when it points
    at nothing or no list fits."""
    nothing = Referred((), (), question)
    match = _ORDINAL.search(question) or _ALL.search(question)
    if match is None:
        return nothing
    lists = answer_lists(previous_answer)
    if not lists:
        return nothing
    wanted = _counted(previous_question)
    if match.re is _ALL and (match.group(1) or match.group(2)):
        count = match.group(1) or match.group(2)
        wanted = _COUNTS[count.casefold()]
    chosen = next((items for items in lists if len(items) == wanted), lists[0])
    if match.re is _ALL:
        named: list[str] = list(chosen)
    else:
        index = _ORDINALS[match.group(1).casefold()]
        if index >= len(chosen):
            return nothing
        named = [chosen[index]]
    others = tuple(item for item in chosen if item not in named)
    said = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    return Referred(
        tuple(named), others, f"{question[: match.start()]}{said}{question[match.end() :]}"
    )
