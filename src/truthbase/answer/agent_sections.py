"""Section ids cited by a model, turned into the tag of the passage that supports the claim.

The book tools show each section as ``<section id="S38" ...>`` with its passages, each passage
followed by its position tag. Small models (Qwen2.5-Coder-1.5B at a 4,096-token window,
measured in the issue-13 notes) often cite the section instead of the passage:
"S38: Lydia elopes with Wickham." A section id names no span, so such an answer had no
citation and fell back to the extractive agent, although the section shown holds the passage.

:func:`cite_sections` rewrites each such reference, ``S38:`` before a sentence or ``[S38]`` /
``(S38)`` next to it, into the position tag of the passage *of that section, as this turn's
tools showed it* that best supports the claim it stands for (the same support check as every
citation, :func:`truthbase.cite.support.check_support`). Nothing is taken on trust: the tag
then goes through the answer shell like any tag the model wrote (screened against the tools'
tags, quote located on the page, claim checked again), so a reference whose section holds no
supporting passage ends as ``quote_only``, never as ``supported``. Only ids of sections a tool
showed this turn are read; "S3" in running text is left alone.

Pure apart from the embedder passed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..cite.parse import parse_answer
from ..cite.support import check_support
from ..cite.tags import format_tag
from ..embed import Embedder
from .model import Source

__all__ = ["SectionCitation", "cite_sections"]

# "[S38]", "(S38)", "S38:" (the id in brackets, or followed by a colon); "S38" alone is text.
_REFERENCE = re.compile(
    r"(?<![\w\[(])(?:\[\s*(S\d{1,5})\s*\]|\(\s*(S\d{1,5})\s*\)|(S\d{1,5})\s*:)(?!\w)"
)
# Placeholders stand in for the references while the answer parser finds each one's claim;
# a unit number no document reaches keeps them apart from real tags.
_PLACEHOLDER_UNIT = 999_999


@dataclass(frozen=True, slots=True)
class SectionCitation:
    """One section reference of the answer and the passage tag it became ("" when none)."""

    section: str
    claim: str
    tag: str
    supported: bool

    def note(self) -> str:
        if not self.tag:
            return f"section {self.section} cited, but none of its passages was shown"
        verdict = "supports" if self.supported else "is the closest to (does not support)"
        return f"section {self.section} cited: passage {self.tag} {verdict} the claim"


def _tags_by_section(sections: Iterable[dict[str, list[str]]]) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for mapping in sections:
        for key, tags in mapping.items():
            bucket = merged.setdefault(key, [])
            bucket.extend(t for t in tags if t not in bucket)
    return merged


def _best_tag(
    claim: str, candidates: Sequence[Source], embedder: Embedder | None
) -> tuple[str, bool]:
    best: tuple[bool, float, str] | None = None
    for src in candidates:
        check = check_support(claim, src.text, embedder=embedder)
        key = (check.supported, check.score, format_tag(src.unit, src.start, src.end))
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        return "", False
    return best[2], best[0]


def cite_sections(
    text: str,
    sections: Iterable[dict[str, list[str]]],
    sources: Sequence[Source],
    embedder: Embedder | None,
) -> tuple[str, list[SectionCitation]]:
    """``text`` with each reference to a shown section replaced by the tag of that section's
    passage that best supports the reference's claim; and what each reference became.

    ``sections``: the section id -> tags maps of this turn's tool runs; ``sources``: the
    sources those runs returned (a tag whose source was cut from the window is no candidate).
    """
    by_section = _tags_by_section(sections)
    if not by_section:
        return text, []
    by_tag = {format_tag(s.unit, s.start, s.end): s for s in sources}
    found = [m for m in _REFERENCE.finditer(text) if _key(m) in by_section]
    if not found:
        return text, []
    # Each reference becomes a unique placeholder tag, so the one parser decides which
    # sentence each reference claims (before it, or after it when it opens the sentence).
    pieces: list[str] = []
    last = 0
    for i, match in enumerate(found):
        pieces += [text[last : match.start()], format_tag(_PLACEHOLDER_UNIT, i, i)]
        last = match.end()
    pieces.append(text[last:])
    marked = "".join(pieces)
    claims: dict[int, str] = {}
    for parsed in parse_answer(marked).claims:
        for written in parsed.tags:
            if written.unit == _PLACEHOLDER_UNIT:
                claims[written.start] = parsed.text
    done: list[SectionCitation] = []
    for i, match in enumerate(found):
        key = _key(match)
        candidates = [by_tag[t] for t in by_section[key] if t in by_tag]
        claim = claims.get(i, "")
        tag, supported = _best_tag(claim, candidates, embedder) if claim else ("", False)
        done.append(SectionCitation(section=key, claim=claim, tag=tag, supported=supported))
        marked = marked.replace(format_tag(_PLACEHOLDER_UNIT, i, i), tag, 1)
    return marked, done


def _key(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)
