"""One answer over the real seed index: event order, citations, JSON shape, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from truthbase.answer import (
    CitationsEvent,
    DoneEvent,
    SourcesEvent,
    TokenEvent,
    answer_question,
    ask,
)
from truthbase.cli import cli
from truthbase.embed import Embedder
from truthbase.store import SQLiteStore
from truthbase.text.matching import quote_in


def test_events_come_in_order_and_citations_verify(
    seed_store: SQLiteStore, embedder: Embedder
) -> None:
    events = list(answer_question(seed_store, embedder, "How does the AI RMF define risk?"))
    kinds = [type(e) for e in events]
    assert kinds[0] is SourcesEvent and kinds[-1] is DoneEvent
    assert kinds[-2] is CitationsEvent
    assert all(k is TokenEvent for k in kinds[1:-2])
    answer = events[-1].answer  # type: ignore[union-attr]
    assert not answer.refused and answer.citations
    for citation in answer.citations:
        unit = seed_store.unit(citation.doc_id, citation.unit)
        assert unit is not None
        assert citation.verified
        assert quote_in(citation.quote, unit.text[citation.start : citation.end])
        assert citation.rects
        assert f"[{citation.n}]" in answer.text


def test_an_unanswerable_question_is_refused(seed_store: SQLiteStore, embedder: Embedder) -> None:
    answer = ask(seed_store, embedder, "What is the boiling point of liquid nitrogen in Kelvin?")
    assert answer.refused and answer.text == "NO_ANSWER" and not answer.citations


def test_ask_json(seed_db: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(seed_db), "ask", "What is a CSF Community Profile?", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"text", "sources", "citations", "refused", "answerer", "timings"} <= set(data)
    for citation in data["citations"]:
        assert {"n", "doc_id", "page", "start", "end", "quote", "rects", "verified"} <= set(
            citation
        )
