"""The CI gate of follow-up questions on golden/followups-dev.json, extractive (no model).

Each turn is asked with the earlier turns (and the answers this run gave) as history, as
`truthbase eval conversations` does. Measured (docs/evals/conversations.md, session 22): first
turns R@8 0.800 and correct citation 0.533; follow-ups resolved R@8 0.806, correct citation
0.500 (18 of 36: the issue's goal, 0.9 x 0.533 = 0.480, met by one question), unanswerable
refused 0.833 (the words a follow-up adds must be in its cited passages: policy rule 4); asked
as written R@8 0.611; topic shifts in the thread equal to the same questions asked alone. The
floors sit a question or two below that; the issue's goals are tests of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_FOLLOWUPS
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder
from truthbase.eval.conversations import evaluate_conversations, load_conversations
from truthbase.eval.golden import default_corpus_root
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

FOLLOW_UP_RECALL_FLOOR = 0.75  # measured 0.806 (36 answerable follow-ups: two fewer is 0.75)
FOLLOW_UP_CITATION_FLOOR = 0.44  # measured 0.500 (18 of 36; 16 is 0.444); 0.389 before a
# comparison showed its earlier side, a follow-up naming another document preferred it and a
# code of a family was cited where a sentence holds it (session 22)
UNANSWERABLE_GOAL = 0.8  # issue 26; measured 0.833 (5 of 6 unanswerable; 6 of 6 before e1587d5)
SHIFT_SLACK = 0.05  # the issue's goal: topic shifts within .05 of the same question alone


def _report(golden_db: Path, embedder: Embedder, *, resolve: bool) -> dict[str, Any]:
    conversations, golden = load_conversations(GOLDEN_FOLLOWUPS)
    store = SQLiteStore(golden_db)
    try:
        prepared = prepare_corpus(
            golden, default_corpus_root(GOLDEN_FOLLOWUPS), store, embedder, ChunkingSettings()
        )
        assert not prepared.skipped_documents, prepared.skipped_documents
        return evaluate_conversations(
            conversations, golden, prepared, store, embedder, RetrievalSettings(), resolve=resolve
        )
    finally:
        store.close()


@pytest.fixture(scope="module")
def resolved(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    return _report(golden_db, embedder, resolve=True)


@pytest.fixture(scope="module")
def as_written(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    return _report(golden_db, embedder, resolve=False)


def test_the_report_has_the_issue_keys(resolved: dict[str, Any]) -> None:
    for part in ("first_turns", "follow_ups"):
        for key in ("recall@8", "answered_with_correct_citation", "unanswerable_refused"):
            assert key in resolved[part], (part, key)
    kinds = set(resolved["follow_ups"]["by_kind"])
    assert {"pronoun", "ellipsis", "comparison", "drill-down", "topic-shift"} <= kinds
    assert resolved["first_turns"]["n"] == resolved["conversations"] == 30


def test_follow_ups_keep_their_floors(resolved: dict[str, Any]) -> None:
    follow_ups = resolved["follow_ups"]
    assert follow_ups["recall@8"] >= FOLLOW_UP_RECALL_FLOOR, follow_ups
    assert follow_ups["answered_with_correct_citation"] >= FOLLOW_UP_CITATION_FLOOR, follow_ups
    assert follow_ups["unanswerable_refused"] >= UNANSWERABLE_GOAL, follow_ups


def test_follow_ups_reach_nine_tenths_of_the_first_turns_recall(resolved: dict[str, Any]) -> None:
    assert resolved["follow_ups"]["recall@8"] >= 0.9 * resolved["first_turns"]["recall@8"]


def test_resolving_finds_more_than_asking_as_written(
    resolved: dict[str, Any], as_written: dict[str, Any]
) -> None:
    assert resolved["follow_ups"]["recall@8"] > as_written["follow_ups"]["recall@8"] + 0.1
    # First turns have no history: both runs ask them alike.
    assert resolved["first_turns"] == as_written["first_turns"]


def test_topic_shifts_are_not_dragged_to_the_old_topic(resolved: dict[str, Any]) -> None:
    shifts = resolved["topic_shifts"]
    for key in ("recall@8", "answered_with_correct_citation"):
        in_thread, alone = shifts["in_thread"][key], shifts["asked_alone"][key]
        assert abs(in_thread - alone) <= SHIFT_SLACK, (key, in_thread, alone)
    assert all(
        r["resolution"] == "standalone"
        for r in resolved["per_turn"]
        if r["kind_tag"] == "topic-shift"
    )


def test_goal_follow_ups_reach_nine_tenths_of_the_first_turns_citations(
    resolved: dict[str, Any],
) -> None:
    """Issue 26's goal without a model: measured 0.500 against 0.9 x 0.533 = 0.480 (session
    22); 0.528 against 0.9 x 0.567 = 0.510 (session 38); 0.556 against 0.9 x 0.600 = 0.540
    (session 39: one more first turn answered by the refusal threshold, one more comparison by
    comparing with the topic's best-matching cited span)."""
    first = resolved["first_turns"]["answered_with_correct_citation"]
    assert resolved["follow_ups"]["answered_with_correct_citation"] >= 0.9 * first


def test_goal_unanswerable_follow_ups_are_refused(resolved: dict[str, Any]) -> None:
    """Issue 26's goal, met by policy rule 4 (the words a follow-up adds, checked in its cited
    passages): every refusal of an unanswerable follow-up names the words it found missing."""
    assert resolved["follow_ups"]["unanswerable_refused"] >= UNANSWERABLE_GOAL
    unanswerable = [r for r in resolved["per_turn"] if r["kind_tag"] == "unanswerable"]
    assert all(r["new_words"] for r in unanswerable), unanswerable
