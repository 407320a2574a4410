"""A comparison's earlier passage kept among the sources (:func:`truthbase.answer.pipeline.
_keeping`): pure list work over hand-made hits, the look-up a recording fake."""

from __future__ import annotations

from truthbase.answer.pipeline import LOOK_UPS, Retrieved, _keeping
from truthbase.model import Chunk
from truthbase.records import SearchHit
from truthbase.turns import CitedSpan


def _hit(i: int, score: float, doc: str = "d", unit: int = 0) -> SearchHit:
    chunk = Chunk(id=i, doc_id=doc, unit=unit, start=100 * i, end=100 * i + 90, text="", rects=())
    return SearchHit(chunk=chunk, score=score, document_title="t")


def _span(doc: str = "d", unit: int = 0, start: int = 0, end: int = 10) -> CitedSpan:
    return CitedSpan(doc_id=doc, unit=unit, start=start, end=end, quote="q")


def _none(_: CitedSpan) -> SearchHit | None:
    return None


HITS = [_hit(i, 1.0 - i / 10) for i in range(6)]  # chunk i holds offsets 100i..100i+90


def test_a_deeper_hit_that_holds_the_span_takes_the_last_place() -> None:
    out = Retrieved(hits=[])
    kept = _keeping(HITS, [_span(start=510, end=520)], 3, out, _none)
    assert [h.chunk.id for h in kept] == [0, 1, 5, 2, 3, 4]
    assert out.info["kept"] == 5
    # One among the first k already: nothing moves.
    assert _keeping(HITS, [_span(start=110, end=120)], 3, Retrieved(hits=[]), _none) == HITS


def test_a_looked_up_hit_scores_no_higher_than_the_one_it_displaces() -> None:
    found = _hit(9, 5.0, doc="e")
    asked: list[CitedSpan] = []

    def look_up(span: CitedSpan) -> SearchHit | None:
        asked.append(span)
        return found if span.doc_id == "e" else None

    spans = [_span(doc="x"), _span(doc="e", start=900, end=910)]
    out = Retrieved(hits=[])
    kept = _keeping(HITS, spans, 3, out, look_up)
    assert [h.chunk.id for h in kept] == [0, 1, 9, 2, 3, 4, 5]
    assert kept[2].score == HITS[2].score  # not the 5.0 its own quote's search gave it
    assert [s.doc_id for s in asked] == ["x", "e"]  # the next span is tried


def test_look_ups_are_bounded_and_one_source_is_the_new_side_s() -> None:
    asked: list[CitedSpan] = []

    def look_up(span: CitedSpan) -> SearchHit | None:
        asked.append(span)
        return None

    many = [_span(doc=f"x{i}") for i in range(1000)]
    out = Retrieved(hits=[])
    assert _keeping(HITS, many, 3, out, look_up) == HITS
    assert len(asked) == LOOK_UPS and out.info["kept"] is None
    assert _keeping(HITS, [_span(start=510, end=520)], 1, Retrieved(hits=[]), look_up) == HITS
