"""Checks shared by the tests of verified citations: every citation shown as verified is
re-checked against the stored text with the one matcher."""

from __future__ import annotations

from truthbase.answer import Answer
from truthbase.cite.parse import parse_answer
from truthbase.cite.resolve import resolve_citations
from truthbase.records import ToolOutput
from truthbase.segments.passages import tags_in
from truthbase.store import Store
from truthbase.text.matching import quote_in


def recheck(store: Store, answer: Answer) -> None:
    """Each verified citation: its quote is in the stored unit text at its span, inside a
    source of this turn."""
    for c in answer.citations:
        if not c.verified:
            continue
        unit = store.unit(c.doc_id, c.unit)
        assert unit is not None
        assert quote_in(c.quote, unit.text[c.start : c.end]), c
        assert any(
            s.n == c.n and s.doc_id == c.doc_id and s.start <= c.start < c.end <= s.end
            for s in answer.sources
        )


def check_output_sources(store: Store, output: ToolOutput, first_n: int) -> None:
    """Every tag the output shows is a source; every source is the stored unit's text there;
    sources are numbered from first_n on; and an answer made of the tags verifies."""
    assert [s.n for s in output.sources] == list(range(first_n, first_n + len(output.sources)))
    spans = {(s.unit, s.start, s.end) for s in output.sources}
    shown = tags_in(output.content)
    assert shown, output.content[:500]
    assert {(t.unit, t.start, t.end) for t in shown} <= spans
    for source in output.sources:
        unit = store.unit(source.doc_id, source.unit)
        assert unit is not None
        assert source.text == unit.text[source.start : source.end]
    answer = " ".join(f"Claim {i} [f{t.unit}-{t.start}-{t.end}]." for i, t in enumerate(shown))
    resolution = resolve_citations(parse_answer(answer), output.sources, store)
    assert not resolution.problems
    assert len(resolution.citations) == len(shown)
    assert all(c.verified for c in resolution.citations)
