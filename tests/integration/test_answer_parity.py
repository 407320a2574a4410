"""Parity of the answer evaluation between the backends: the same index (the seed PDFs, copied
into PostgreSQL with the same chunks and vectors) answers a spread of dev.json's questions with
the extractive answerer, and both backends give the same metrics.

A subset keeps the suite fast: every sixth answerable question on the seed PDFs (all four
documents) and every third unanswerable one. The full set, measured by `truthbase eval answers`
on both backends, is in the PostgreSQL issue's note (identical reports since migration 4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_DEV
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder
from truthbase.eval.answers import evaluate_answers
from truthbase.eval.golden import GoldenSet, default_corpus_root, load_golden
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore, Store
from truthbase.store.postgres import PostgresStore

pytestmark = pytest.mark.slow


def seed_subset(golden: GoldenSet) -> GoldenSet:
    pdfs = {name for name, doc in golden.documents.items() if doc.path.endswith(".pdf")}
    answerable = [
        q for q in golden.questions if q.answerable and {e.doc for e in q.evidence} <= pdfs
    ]
    unanswerable = [q for q in golden.questions if not q.answerable]
    chosen = {q.id for q in answerable[::6] + unanswerable[::3]}
    return golden.model_copy(
        update={
            "documents": {n: d for n, d in golden.documents.items() if n in pdfs},
            "questions": tuple(q for q in golden.questions if q.id in chosen),
        }
    )


def _evaluate(store: Store, golden: GoldenSet, embedder: Embedder) -> dict[str, Any]:
    prepared = prepare_corpus(
        golden, default_corpus_root(GOLDEN_DEV), store, embedder, ChunkingSettings()
    )
    assert not prepared.skipped_documents
    return evaluate_answers(golden, prepared, store, embedder, RetrievalSettings())


def test_answer_evaluation_is_the_same_on_both_backends(
    seed_db: Path, pg_seed_url: str, embedder: Embedder
) -> None:
    golden = seed_subset(load_golden(GOLDEN_DEV))
    assert len(golden.questions) >= 10
    assert len(golden.documents) == 4
    sqlite = SQLiteStore(seed_db)
    try:
        a = _evaluate(sqlite, golden, embedder)
    finally:
        sqlite.close()
    postgres = PostgresStore(pg_seed_url)
    try:
        b = _evaluate(postgres, golden, embedder)
    finally:
        postgres.close()
    assert a["questions"] == b["questions"] == len(golden.questions)
    assert not a["skipped"] and not b["skipped"]
    # every citation shown as verified is verified again against the page text, on both
    assert a["verified_share"] == b["verified_share"] == 1.0
    # the full-text arms tokenize, stem and score alike (PostgreSQL migration 4 gives them FTS5's
    # tokenizer), so every question gets the same sources and the same answer on both
    assert a["per_question"] == b["per_question"]
    for key in ("unanswerable_refused", "answered", "false_refusals", "citation_precision"):
        assert a[key] == b[key], key
