"""Verify one claim against one page: is the quote there, and does it support the claim?

:func:`verify_claim` is what ``truthbase verify-claim`` and the API call: the quote is located in
the stored unit text with the one matcher (:func:`truthbase.text.matching.find_quote`), and the
claim is checked against it with :func:`.support.check_support` (the context being the
sentences around the quote on the page). The three states are those of a citation:
``supported`` (on the page and supported), ``quote_only`` (on the page, the support checks
fail), ``unverified`` (the quote is not on the page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..embed import Embedder
from ..errors import InvalidInput, NotFound
from ..geometry import span_line_rects
from ..model import Rect
from ..records import Conflict
from ..store.base import Documents
from ..text.matching import find_quote, normalize
from .conflict import conflict_of
from .judge import Judge
from .support import Reason, SupportCheck, check_support, context_around, document_names

__all__ = ["ClaimState", "ClaimVerdict", "resolve_document", "verify_claim"]

ClaimState = Literal["supported", "quote_only", "unverified"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimVerdict:
    """Where the quote is on the unit (when found) and whether it supports the claim."""

    doc_id: str
    unit: int
    quote: str
    claim: str
    state: ClaimState
    found: bool
    start: int | None = None
    end: int | None = None
    rects: tuple[Rect, ...] = ()
    check: SupportCheck | None = None
    #: When the state is ``quote_only``: the failing check, the two sides and the page's side
    #: located on the page (:mod:`.conflict`).
    conflict: Conflict | None = None

    @property
    def page(self) -> int:
        return self.unit + 1

    @property
    def reasons(self) -> tuple[Reason, ...]:
        if not self.found:
            return (Reason("quote_not_found", f"the quote is not on unit {self.unit}"),)
        return self.check.reasons if self.check is not None else ()

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "unit": self.unit,
            "page": self.page,
            "quote": self.quote,
            "claim": self.claim,
            "state": self.state,
            "found": self.found,
            "start": self.start,
            "end": self.end,
            "rects": [list(r) for r in self.rects],
            "support": self.check.to_json() if self.check is not None else None,
            "reasons": [r.to_json() for r in self.reasons],
            "conflict": None if self.conflict is None else self.conflict.to_json(),
        }


def resolve_document(store: Documents, wanted: str) -> str:
    """The id of the document whose id is ``wanted`` or the one whose id starts with it:
    NotFound when none does, InvalidInput when several do (every ``--doc`` of the CLI)."""
    prefix = wanted.strip().lower()
    if not prefix:
        raise InvalidInput("the document id is empty (see `truthbase docs`)")
    ids = [d.id for d in store.list_documents()]
    if prefix in ids:
        return prefix
    matches = [i for i in ids if i.startswith(prefix)]
    if not matches:
        raise NotFound(f"no document id starts with {wanted!r} (see `truthbase docs`)")
    if len(matches) > 1:
        raise InvalidInput(f"{len(matches)} document ids start with {wanted!r}; give more of it")
    return matches[0]


def verify_claim(
    store: Documents,
    doc_id: str,
    unit: int,
    quote: str,
    claim: str,
    embedder: Embedder | None = None,
    judge: Judge | None = None,
) -> ClaimVerdict:
    """Whether ``quote`` is on unit ``unit`` (0-based) of document ``doc_id`` (an id or a
    unique prefix) and supports ``claim`` (with the model ``judge`` when given: the setting
    ``support.judge``, :mod:`.judge`).

    Raises InvalidInput for an empty quote or claim, or a unit out of range; NotFound for an
    unknown document.
    """
    if not normalize(quote):
        raise InvalidInput("the quote is empty")
    if not normalize(claim):
        raise InvalidInput("the claim is empty")
    full_id = resolve_document(store, doc_id)
    info = store.document(full_id)
    count = info.unit_count if info is not None else 0
    if not 0 <= unit < count:
        raise InvalidInput(
            f"unit {unit} is out of range: document {full_id[:12]} has units 0..{count - 1} "
            f"(pages 1..{count})"
        )
    stored = store.unit(full_id, unit)
    if stored is None:
        raise NotFound(f"unit {unit} of document {full_id[:12]} is not stored")
    found = find_quote(quote, stored.text)
    if found is None:
        return ClaimVerdict(
            doc_id=full_id, unit=unit, quote=quote, claim=claim, state="unverified", found=False
        )
    start, end = found[0][0], found[-1][1]
    first = store.unit(full_id, 0)
    check = check_support(
        claim,
        quote,
        context=context_around(stored.text, start, end),
        embedder=embedder,
        judge=judge,
        document=document_names(
            info.title if info is not None else "", first.text if first else ""
        ),
    )
    return ClaimVerdict(
        doc_id=full_id,
        unit=unit,
        quote=quote,
        claim=claim,
        state="supported" if check.supported else "quote_only",
        found=True,
        start=start,
        end=end,
        rects=tuple(span_line_rects(stored.text, stored.boxes, start, end)),
        check=check,
        conflict=None
        if check.supported
        else conflict_of(check.reasons, stored.text, stored.boxes, start, end),
    )
