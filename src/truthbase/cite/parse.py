"""Parse an answer text: [n] markers, position tags [f{unit}-{start}-{end}], and refusals.

The tag format is :mod:`truthbase.cite.tags`; the refusal rule is
:mod:`truthbase.cite.refusal` (re-exported by :mod:`truthbase.answer.policy`).

Pure. A *group* is a run of markers and tags separated only by whitespace ("[1][2]", "[1, 2]",
"[1] [f3-10-80]"); the *claim* of a group is the answer text between the previous group (or the
start) and this one, without surrounding whitespace and leading punctuation. A marker glued
inside a word ("foo[1]bar") is still a marker: its claim ends where the marker starts.

Some models write the markers *before* the sentence they support ("[1] Reflection tokens are
defined in the appendix. [3] They include ..."). A group that opens a line (nothing but
whitespace before it on its line), or that follows right after the sentence such a *leading*
group claimed, is leading too: its claim is the sentence it opens (up to the sentence's end,
the next group or the line's end). A leading group with no sentence after it claims the text
before it, as a trailing group does. Both styles can mix in one answer.

Whether a number names an existing source, and whether a tag resolves, is decided later
(:mod:`truthbase.cite.resolve`), where the sources are known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .refusal import is_refusal
from .tags import TAG, TAG_LIKE, TAG_PATTERN, format_tag

_MARKER = r"\[\s*\d{1,4}(?:\s*,\s*\d{1,4})*\s*\]"
_TAG = TAG_PATTERN
_ITEM = re.compile(rf"{_MARKER}|{_TAG}")
_GROUP = re.compile(rf"(?:{_MARKER}|{_TAG})(?:\s*(?:{_MARKER}|{_TAG}))*")
_LEADING = " \t\r\n.,;:!?)]}"
# The end of a sentence: its closing punctuation (and quotes or brackets after it) before
# whitespace or the end of the text.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s|$)")


_MARKER_LIKE = re.compile(rf"{_MARKER}|{TAG_LIKE.pattern}")
# Look-alike brackets (fullwidth): they read the same and nothing below parses them.
_DEFUSED = str.maketrans("[]", "\uff3b\uff3d")


def defuse_markers(text: str) -> str:
    """Document ``text`` with every [n] marker and tag-like string in it written with
    look-alike brackets ("as shown in [3]" -> "as shown in \uff3b3\uff3d").

    A paper's own reference markers are data: quoted in an answer (the extractive answerer
    copies source sentences) or shown to a model, they must not read as citations of the
    answer's sources."""
    return _MARKER_LIKE.sub(lambda m: m.group().translate(_DEFUSED), text)


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


def _opens_line(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip()


def _following_sentence(text: str, start: int, limit: int) -> int:
    """The end of the sentence that starts at ``start``: its closing punctuation, else the
    line's end, never past ``limit`` (the next group)."""
    line_end = text.find("\n", start)
    stop = min(limit, line_end if line_end >= 0 else len(text))
    end = _SENTENCE_END.search(text, start, stop)
    return end.end() if end is not None else stop


def parse_answer(text: str) -> ParsedAnswer:
    """Markers, tags and claims of ``text``, in order; ``refused`` per :func:`is_refusal`.
    Groups before their sentence: see the module docstring."""
    claims: list[Claim] = []
    previous_end = 0
    groups = list(_GROUP.finditer(text))
    led_to: int | None = None  # where the previous leading group's sentence ended
    for i, group in enumerate(groups):
        numbers: list[int] = []
        tags: list[Tag] = []
        for item in _ITEM.finditer(group.group()):
            raw = item.group()
            tag = TAG.fullmatch(raw)
            if tag is not None:
                tags.append(Tag(int(tag.group(1)), int(tag.group(2)), int(tag.group(3))))
            else:
                numbers.extend(int(p) for p in raw.strip("[]").split(","))
        leading = _opens_line(text, group.start()) or (
            led_to is not None and not text[led_to : group.start()].strip()
        )
        led_to = None
        start, end = _claim_bounds(text, previous_end, group.start())
        if leading:
            limit = groups[i + 1].start() if i + 1 < len(groups) else len(text)
            sentence_end = _following_sentence(text, group.end(), limit)
            after_start, after_end = _claim_bounds(text, group.end(), sentence_end)
            if after_start < after_end:
                start, end, led_to = after_start, after_end, sentence_end
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
        previous_end = led_to if led_to is not None else group.end()
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
