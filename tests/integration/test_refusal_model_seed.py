"""The refusal model decides on the real seed index: a question the seed PDFs do not answer,
naming nothing (so the named-term rule does not refuse it), is refused by the model; a question
they answer is answered, and both report what the model weighed."""

from __future__ import annotations

from truthbase.answer import ask
from truthbase.embed import Embedder
from truthbase.store import SQLiteStore

UNSUPPORTED = "How long should fresh pasta be boiled before it is served with a tomato sauce?"
ANSWERABLE = "How does the AI RMF define risk?"


def test_a_question_without_support_is_refused_by_the_model(
    seed_store: SQLiteStore, embedder: Embedder
) -> None:
    answer = ask(seed_store, embedder, UNSUPPORTED)
    assert answer.refused and not answer.citations
    assert answer.info["missing_terms"] == []  # not the named-term rule: the model's refusal
    assert answer.info["answer_probability"] < answer.info["threshold"]
    assert set(answer.info["refusal_features"]) >= {"support", "retrieval", "agreeing"}


def test_an_answerable_question_is_answered(seed_store: SQLiteStore, embedder: Embedder) -> None:
    answer = ask(seed_store, embedder, ANSWERABLE)
    assert not answer.refused and answer.citations
    assert answer.info["answer_probability"] >= answer.info["threshold"]
