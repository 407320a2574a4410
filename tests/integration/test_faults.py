"""Faults survived: the LLM failing every way a provider fails (a scripted OpenAI-compatible
server, tests/helpers/transcripts.py), a SIGKILL in the middle of an ingest (SQLite and
PostgreSQL), PostgreSQL restarted under a search, and a full disk under the SQLite index.

Each answer must complete (a ``done`` event, through the fallback chain where the model failed)
and show nothing unsupported as supported: every ``supported`` citation's quote is on its page
at its span (re-checked here), and a refusal or the extractive answerer where the model gave
nothing usable.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.transcripts import Reply, Scripted, completion, scripted_server, stream_piece
from truthbase.answer import (
    Answer,
    DoneEvent,
    ErrorEvent,
    Event,
    ExtractiveAnswerer,
    LLMAnswerer,
    TokenEvent,
    answer_question,
)
from truthbase.config import RetrievalSettings
from truthbase.embed import Embedder
from truthbase.llm import with_fallbacks
from truthbase.store import SQLiteStore
from truthbase.textmatch import quote_in

QUESTION = "What are the six Functions of the CSF 2.0 Core?"
K = 3


@pytest.fixture
def server() -> Iterator[Scripted]:
    with scripted_server() as scripted:
        yield scripted


def _answer(
    store: SQLiteStore, embedder: Embedder, server: Scripted, timeout: float = 2.0
) -> tuple[list[Event], Answer]:
    """One answer through the pipeline with the scripted model first, the extractive last."""
    answerer = LLMAnswerer(
        with_fallbacks([server.model("scripted")]), ExtractiveAnswerer(embedder), timeout=timeout
    )
    events = list(
        answer_question(store, embedder, QUESTION, RetrievalSettings(), answerer=answerer, k=K)
    )
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert not errors, errors
    done = events[-1]
    assert isinstance(done, DoneEvent), [type(e).__name__ for e in events]
    _assert_nothing_unsupported_is_supported(store, done.answer)
    return events, done.answer


def _assert_nothing_unsupported_is_supported(store: SQLiteStore, answer: Answer) -> None:
    numbers = {s.n for s in answer.sources}
    for c in answer.citations:
        assert c.n in numbers
        if c.supported or c.verified:
            unit = store.unit(c.doc_id, c.unit)
            assert unit is not None and c.quote, c
            assert quote_in(c.quote, unit.text[c.start : c.end]), c
    if answer.refused:
        assert not any(c.supported for c in answer.citations)


def _fell_back(answer: Answer) -> None:
    assert answer.answerer == "extractive", answer.info
    assert answer.info["fell_back_to"] == "extractive"
    assert [f["model"] for f in answer.info["failed"]] == ["scripted"]
    assert not answer.refused and answer.citations
    assert all(c.supported for c in answer.citations)


# -- the LLM --------------------------------------------------------------------------------------


def test_a_model_that_times_out_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(body=completion("late"), delay_s=1.5))
    _, answer = _answer(seed_store, embedder, server, timeout=0.4)
    _fell_back(answer)
    assert answer.info["failed"][0]["timed_out"] is True


def test_a_model_that_returns_500_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(500, {"error": {"message": "internal"}}))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_model_that_returns_garbage_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(200, b"<html>\x00\xff not a completion</html>"))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_slow_stream_completes_with_the_model(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    text = ["The Functions ", "are GOVERN, IDENTIFY, ", "PROTECT, DETECT, ", "RESPOND, RECOVER."]
    # two pieces, a pause shorter than the timeout, then the rest and the end of the reply
    tail = "".join(stream_piece(p) for p in text[2:])
    server.say(Reply(pieces=text[:2], pause_s=0.5, tail=tail))
    events, answer = _answer(seed_store, embedder, server, timeout=2.0)
    assert answer.answerer == "scripted" and answer.info["failed"] == []
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "".join(text)


def test_a_stream_that_stalls_after_its_first_tokens_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(pieces=["The Functions are GOVERN [1], "], pause_s=2.0, tail=None))
    _, answer = _answer(seed_store, embedder, server, timeout=0.5)
    _fell_back(answer)
    assert answer.info["failed"][0]["timed_out"] is True
    assert "GOVERN [1], " not in answer.text


def test_a_truncated_stream_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    # the connection ends without a finish_reason and without [DONE]
    server.say(Reply(pieces=["The Functions are GOVERN, IDENTIFY and"], done=False))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_stream_that_stops_mid_marker_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(pieces=["The Functions are GOVERN and RECOVER [", "1"], done=False))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)
    assert "[1" not in answer.text.replace("[1]", "")
