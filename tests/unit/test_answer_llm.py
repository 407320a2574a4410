"""The LLM answerer's fallbacks, the mode choice, stored answers and the citation audit, with
scripted models and in-memory data (no server, no index)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from truthbase.answer import (
    Answer,
    Draft,
    LLMAnswerer,
    LLMNotConfigured,
    Source,
    answerer_for,
    record_answer,
    resolve_mode,
    stages_for,
)
from truthbase.cite import verify_answers
from truthbase.config import ExtractiveSettings, LLMSettings
from truthbase.llm import ChatMessage, LLMError, LLMTimeout
from truthbase.model import Unit
from truthbase.records import StoredAnswer
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION
from truthbase.turns import Resolution

SOURCES = [
    Source(
        n=1,
        doc_id="d" * 64,
        title="Doc",
        unit=0,
        start=0,
        end=60,
        text="The CSF Core has six Functions: Govern, Identify, Protect.",
        rects=(),
    )
]


class Scripted:
    """A chat model that replies with ``pieces`` or raises ``error``."""

    def __init__(self, name: str, pieces: Sequence[str] = (), error: LLMError | None = None):
        self._name = name
        self.pieces = list(pieces)
        self.error = error
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return "".join(self.pieces)

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return iter(self.pieces)


class Fallback:
    """A stand-in for the extractive answerer."""

    @property
    def name(self) -> str:
        return "extractive"

    def draft(
        self, question: str, sources: Sequence[Source], follow_up: Resolution | None = None
    ) -> Draft:
        return Draft(tokens=iter(["NO_ANSWER"]), info={"support": 0.1})


def test_the_first_model_that_answers_streams_and_is_named() -> None:
    dead = Scripted("dead", error=LLMError("dead: connection refused"))
    live = Scripted("live", pieces=["The Core ", "has six Functions [1]."])
    draft = LLMAnswerer(dead, Fallback(), timeout=1).draft("q?", SOURCES)  # a single model
    assert draft.answerer == "extractive"  # the only model failed
    draft = LLMAnswerer(_chain(dead, live), Fallback(), timeout=1).draft("q?", SOURCES)
    assert list(draft.tokens) == ["The Core ", "has six Functions [1]."]
    assert draft.answerer == "live"
    assert draft.info["model"] == "live" and draft.info["failed"][0]["model"] == "dead"


def test_every_model_failing_lets_the_extractive_answerer_answer() -> None:
    slow = Scripted("slow", error=LLMTimeout("slow: timed out"))
    empty = Scripted("empty", pieces=["  ", ""])
    draft = LLMAnswerer(_chain(slow, empty), Fallback(), timeout=1).draft("q?", SOURCES)
    assert draft.answerer == "extractive" and list(draft.tokens) == ["NO_ANSWER"]
    assert draft.info["fell_back_to"] == "extractive" and draft.info["support"] == 0.1
    assert [(f["model"], f["timed_out"]) for f in draft.info["failed"]] == [
        ("slow", True),
        ("empty", False),
    ]


def test_without_streaming_the_reply_comes_as_one_piece() -> None:
    live = Scripted("live", pieces=["a [1]", " b [1]"])
    draft = LLMAnswerer(live, Fallback(), timeout=1, stream=False).draft("q?", SOURCES)
    assert list(draft.tokens) == ["a [1] b [1]"] and draft.answerer == "live"


def _chain(*models: Scripted) -> Any:
    from truthbase.llm import with_fallbacks

    return with_fallbacks(list(models))


def test_the_mode_follows_the_settings() -> None:
    none = LLMSettings()
    some = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")
    assert resolve_mode(None, none) == "extractive"
    assert resolve_mode(None, some) == "llm"
    assert resolve_mode("extractive", some) == "extractive"
    with pytest.raises(LLMNotConfigured, match="TRUTHBASE_LLM__BASE_URL"):
        resolve_mode("llm", none)
    with pytest.raises(ValueError):
        resolve_mode("oracle", some)
    assert not stages_for(some, "extractive").active
    assert stages_for(some, "llm").model is not None
    staged = stages_for(some.model_copy(update={"rerank_enabled": True}), "llm")
    assert staged.active and staged.rerank and not staged.rewrite


def test_answerer_for_builds_the_chain_with_the_extractive_answerer_last() -> None:
    settings = LLMSettings(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        fallbacks=({"base_url": "http://127.0.0.1:8/v1", "model": "n"},),  # type: ignore[arg-type]
    )
    answerer = answerer_for(settings, ExtractiveSettings(), _NoEmbedder(), "llm")  # type: ignore[arg-type]
    assert isinstance(answerer, LLMAnswerer)
    assert [m.name for m in answerer.chain.models] == [
        "m@http://127.0.0.1:9/v1",
        "n@http://127.0.0.1:8/v1",
    ]
    assert answerer.fallback.name == "extractive"
    extractive = answerer_for(settings, ExtractiveSettings(), _NoEmbedder(), "extractive")  # type: ignore[arg-type]
    assert extractive.name == "extractive"


class _NoEmbedder:
    pass


# -- stored answers and the audit -------------------------------------------------------------

PAGE = "Intro. The CSF Core has six Functions: Govern, Identify, Protect. The end."
QUOTE = "The CSF Core has six Functions: Govern, Identify, Protect."
START = PAGE.index(QUOTE)


class Pages:
    def __init__(self, text: str) -> None:
        self.text = text

    def unit(self, doc_id: str, index: int) -> Unit | None:
        if doc_id != "d" * 64 or index != 0:
            return None
        return Unit(index=0, text=self.text, boxes=[None] * len(self.text))


def _citation(**changes: Any) -> dict[str, Any]:
    record = {
        "n": 1,
        "doc_id": "d" * 64,
        "page": 1,
        "unit": 0,
        "start": START,
        "end": START + len(QUOTE),
        "quote": QUOTE,
        "verified": True,
    }
    return {**record, **changes}


def _stored(*citations: dict[str, Any], answer_id: int = 1) -> StoredAnswer:
    return StoredAnswer(answer_id, "q?", {"citations": list(citations)}, "2025-01-01T00:00:00")


def test_the_audit_confirms_citations_on_their_page() -> None:
    report = verify_answers(
        [_stored(_citation(), _citation(verified=False, quote="made up"))], Pages(PAGE)
    )
    assert report.ok and report.verified_citations == 1 and report.unverified_citations == 1


def test_the_audit_lists_every_failure() -> None:
    answers = [
        _stored(_citation(), answer_id=7),
        _stored(
            _citation(n=2, start=0, end=6),  # the quote is not at this span
            _citation(n=3, doc_id="e" * 64),  # no such document
            _citation(n=4, end=10_000),  # outside the page
            _citation(n=5, quote=""),
            answer_id=8,
        ),
    ]
    report = verify_answers(answers, Pages(PAGE.replace("Govern", "Gvern")))
    failures = [(f.answer_id, f.n, f.why) for f in report.failures]
    assert [f[:2] for f in failures] == [(7, 1), (8, 2), (8, 3), (8, 4), (8, 5)]
    assert "not in the page text" in failures[0][2]
    assert "not in the index" in failures[2][2] and "outside" in failures[3][2]


def test_answers_are_stored_and_read_back(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a.sqlite")
    try:
        answer = Answer(
            question="q?", text="x [1]", sources=[], citations=[], refused=False, answerer="m"
        )
        assert record_answer(store, answer) == 1 and answer.id == 1
        (stored,) = store.answers()
        assert stored.id == 1 and stored.question == "q?" and stored.answer["answerer"] == "m"
    finally:
        store.close()


def test_a_version_3_index_gains_the_answers_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE answers")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.answers() == []
    finally:
        store.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    # 5: segments, 6: token signs, 7: accounts, 8: jobs, 9: languages, 10: text source, 11: kind,
    # 12: user ids, 13: sessions, tokens and quotas by user id, 14: identifiers as whole terms,
    # 15: packed glyph boxes, 19: feedback and the answers' asker
    assert int(version) == SCHEMA_VERSION == 22
