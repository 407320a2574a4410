"""The records citations are made of: numbered sources and resolved citations.

Pages are 1-based (the n-th page of the file); ``unit`` is the 0-based unit index; ``start`` and
``end`` are offsets into that unit's canonical text. Rects are in PDF user space.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..model import Rect

#: What a refusing answerer says, and what an answer text that refuses contains.
NO_ANSWER = "NO_ANSWER"


def _rects_json(rects: tuple[Rect, ...]) -> list[list[float]]:
    return [list(r) for r in rects]


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Source [n] of an answer: one retrieved chunk."""

    n: int  # 1-based, as the answer's [n] markers name it
    doc_id: str
    title: str
    unit: int
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    chunk_id: int | None = None
    score: float = 0.0

    @property
    def page(self) -> int:
        """The 1-based physical page."""
        return self.unit + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "title": self.title,
            "page": self.page,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "rects": _rects_json(self.rects),
            "chunk_id": self.chunk_id,
            "score": self.score,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A resolved citation: the span of source ``n``'s page that supports a claim.

    ``verified`` is True only when ``quote`` was found, under the matching rule, in the stored
    unit text at [start, end). ``claim`` is the answer text the citation supports.
    """

    n: int
    doc_id: str
    unit: int
    start: int
    end: int
    quote: str
    rects: tuple[Rect, ...]
    verified: bool
    claim: str = ""
    support: float = 0.0
    via: Literal["marker", "tag"] = "marker"

    @property
    def page(self) -> int:
        return self.unit + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "page": self.page,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "quote": self.quote,
            "rects": _rects_json(self.rects),
            "verified": self.verified,
            "claim": self.claim,
            "support": round(self.support, 4),
            "via": self.via,
        }
