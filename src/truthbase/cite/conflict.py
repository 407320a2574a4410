"""Where a claim departs from its page: the failing check's two sides, the page's side located.

The support checks (:mod:`.support`, :mod:`.vetoes`, :mod:`.numbers`) name what the claim says
and what the page says instead ("85%" / "87%"), as the words they compared: the quote's words as
written, normalized (case-folded) words, or a list of candidates ("87%, 85.1%", nearest first).
:func:`locate_page_side` turns that back into offsets of the unit's canonical text inside the
quote's span, so the viewer can mark those glyphs; :func:`conflict_of` picks the reason a
``quote_only`` citation shows and builds its :class:`~truthbase.records.Conflict`.

Pure: text in, offsets out; the rects come from the unit's glyph boxes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..geometry import span_line_rects
from ..model import Rect
from ..records import Conflict
from ..text.matching import normalize, normalize_with_offsets
from .model import Reason

__all__ = ["conflict_of", "locate_page_side"]

_WORD = re.compile(r"[^\W_]+")
#: Words that may stand between two words of a page side that the check named apart (a
#: negation's scope skips stop words: "never produces ... units" is "never produc unit").
_GAP_WORDS = 4


def _pieces(page_says: str) -> list[str]:
    """The alternatives of a page side: a check that names several candidates joins them with
    ", " (nearest first); a whole side with a comma of its own stays one piece first."""
    whole = normalize(page_says).strip()
    parts = [normalize(p).strip() for p in page_says.split(", ")]
    return list(dict.fromkeys(p for p in [whole, *parts] if p))


def _bounded(piece: str) -> str:
    """``piece`` as a regex that does not start or end inside a word or number."""
    head = r"(?<![^\W_])" if piece[0].isalnum() else ""
    tail = r"(?![^\W_])" if piece[-1].isalnum() else ""
    return head + re.escape(piece) + tail


def _by_words(piece: str) -> str | None:
    """``piece`` word by word: each word as a word start (a stem "produc" of "produces"), with up
    to :data:`_GAP_WORDS` words between two of them."""
    words = _WORD.findall(piece)
    if not words:
        return None
    gap = rf"[\W_]+(?:[^\W_]+[\W_]+){{0,{_GAP_WORDS}}}?"
    return r"(?<![^\W_])" + gap.join(re.escape(w) + r"[^\W_]*" for w in words)


def locate_page_side(text: str, start: int, end: int, page_says: str) -> tuple[int, int] | None:
    """The span of ``text`` (offsets of the whole text) inside the quote's span [start, end) that
    the page side ``page_says`` names, or None: the whole side first, then each candidate in
    order, each as written (normalized) and then word by word."""
    if not page_says.strip() or not 0 <= start < end <= len(text):
        return None
    quote = normalize_with_offsets(text[start:end])
    for piece in _pieces(page_says):
        for pattern in (_bounded(piece), _by_words(piece)):
            if pattern is None:
                continue
            found = re.search(pattern, quote.text)
            if found is not None and found.end() > found.start():
                lo, hi = quote.original_span(found.start(), found.end())
                return start + lo, start + hi
    return None


def _shown(reasons: Iterable[Reason]) -> Reason | None:
    """The reason a reader is shown: the first with both sides, else the first with either."""
    listed = list(reasons)
    both = next((r for r in listed if r.claim_says and r.page_says), None)
    return both or next((r for r in listed if r.claim_says or r.page_says), None)


def conflict_of(
    reasons: Iterable[Reason],
    text: str,
    boxes: Sequence[Rect | None],
    start: int,
    end: int,
) -> Conflict | None:
    """The conflict of a claim with the quote at [start, end) of a unit's ``text``: the reason
    shown (:func:`_shown`) with its page side located and its rects; None when no reason has a
    side."""
    reason = _shown(reasons)
    if reason is None:
        return None
    where = locate_page_side(text, start, end, reason.page_says)
    rects: tuple[Rect, ...] = ()
    if where is not None:
        rects = tuple(span_line_rects(text, boxes, where[0], where[1]))
    return Conflict(
        code=reason.code,
        message=reason.message,
        claim_says=reason.claim_says,
        page_says=reason.page_says,
        page_start=None if where is None else where[0],
        page_end=None if where is None else where[1],
        rects=rects,
    )
