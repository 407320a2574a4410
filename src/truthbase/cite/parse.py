"""Parse an answer text: [n] markers, position tags [f{unit}-{start}-{end}], and refusals.

The tag format is :mod:`truthbase.cite.tags`; the refusal rule is
:mod:`truthbase.cite.refusal` (re-exported by :mod:`truthbase.answer.policy`).

Pure. A *group* is a run of markers and tags separated only by whitespace ("[1][2]", "[1, 2]",
"[1] [f3-10-80]"); the *claim* of a group is the answer text between the previous group (or the
start) and this one, without surrounding whitespace and leading punctuation. A marker glued
inside a word ("foo[1]bar") is still a marker: its claim ends where the marker starts.

Whether a number names an existing source, and whether a tag resolves, is decided later
(:mod:`truthbase.cite.resolve`), where the sources are known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .refusal import is_refusal
from .tags import TAG, TAG_PATTERN, format_tag

_MARKER = r"\[\s*\d{1,4}(?:\s*,\s*\d{1,4})*\s*\]"
_TAG = TAG_PATTERN
_ITEM = re.compile(rf"{_MARKER}|{_TAG}")
_GROUP = re.compile(rf"(?:{_MARKER}|{_TAG})(?:\s*(?:{_MARKER}|{_TAG}))*")
_LEADING = " \t\r\n.,;:!?)]}"


@dataclass(frozen=True, slots=True)
class Tag:
    """A position tag as written: unit index within a source's document, and the char span."""

    unit: int
    start: int
    end: int

    @property
    def text(self) -> str:
        return format_tag(self.unit, self.start, self.end)


@dataclass(frozen=True, slots=True)
class Claim:
    """One marker group and the text it cites.

    ``numbers`` are the [n] values as written (possibly naming no source); ``group_start`` and
    ``group_end`` delimit the group in the answer text, ``start`` and ``end`` the claim.
    """

    text: str
    start: int
    end: int
    numbers: tuple[int, ...]
    tags: tuple[Tag, ...]
    group_start: int
    group_end: int


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    text: str
    refused: bool
    claims: tuple[Claim, ...]


def _claim_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _LEADING:
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def parse_answer(text: str) -> ParsedAnswer:
    """Markers, tags and claims of ``text``, in order; ``refused`` per :func:`is_refusal`."""
    claims: list[Claim] = []
    previous_end = 0
    for group in _GROUP.finditer(text):
        numbers: list[int] = []
        tags: list[Tag] = []
        for item in _ITEM.finditer(group.group()):
            raw = item.group()
            tag = TAG.fullmatch(raw)
            if tag is not None:
                tags.append(Tag(int(tag.group(1)), int(tag.group(2)), int(tag.group(3))))
            else:
                numbers.extend(int(p) for p in raw.strip("[]").split(","))
        start, end = _claim_bounds(text, previous_end, group.start())
        claims.append(
            Claim(
                text=text[start:end],
                start=start,
                end=end,
                numbers=tuple(dict.fromkeys(numbers)),
                tags=tuple(dict.fromkeys(tags)),
                group_start=group.start(),
                group_end=group.end(),
            )
        )
        previous_end = group.end()
    return ParsedAnswer(text=text, refused=is_refusal(text), claims=tuple(claims))


def strip_markers(text: str) -> str:
    """``text`` without markers and tags, whitespace collapsed (what a claim says)."""
    return " ".join(_GROUP.sub(" ", text).split())


def render_groups(text: str, claims: tuple[Claim, ...], numbers: list[tuple[int, ...]]) -> str:
    """``text`` with each claim's group replaced by ``[a][b]`` of the given numbers (or dropped)."""
    out: list[str] = []
    cursor = 0
    for claim, kept in zip(claims, numbers, strict=True):
        before = text[cursor : claim.group_start]
        if kept:
            out.append(before)
            out.append("".join(f"[{n}]" for n in kept))
        else:
            out.append(before.rstrip(" \t") if not before.endswith("\n") else before)
        cursor = claim.group_end
    out.append(text[cursor:])
    return "".join(out)
