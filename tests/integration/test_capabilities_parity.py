"""Parity of the retrieval evaluation on capabilities-dev.json between the backends: the
capabilities index (German, Chinese and table PDFs, the scans missing until OCR lands), copied
into PostgreSQL with the same chunks and vectors, must give the same ranks for every question in
every mode, hence the same metrics per tag (issue 14: both backends give the same retrieval
metrics on capabilities-dev.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_CAPABILITIES
from tests.helpers.pg_server import copy_into_postgres
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder
from truthbase.eval.golden import default_corpus_root, load_golden
from truthbase.eval.retrieval import evaluate_retrieval, prepare_corpus
from truthbase.store import SQLiteStore, Store
from truthbase.store.postgres import PostgresStore

pytestmark = pytest.mark.slow


def _evaluate(store: Store, embedder: Embedder) -> dict[str, Any]:
    golden = load_golden(GOLDEN_CAPABILITIES)
    prepared = prepare_corpus(
        golden, default_corpus_root(GOLDEN_CAPABILITIES), store, embedder, ChunkingSettings()
    )
    return evaluate_retrieval(golden, prepared, store, embedder, RetrievalSettings())


def test_capabilities_retrieval_is_the_same_on_both_backends(
    capabilities_db: Path, embedder: Embedder
) -> None:
    sqlite = SQLiteStore(capabilities_db)
    try:
        a = _evaluate(sqlite, embedder)
    finally:
        sqlite.close()
    postgres = PostgresStore(copy_into_postgres(capabilities_db))
    try:
        b = _evaluate(postgres, embedder)
    finally:
        postgres.close()
    assert a["questions"] == b["questions"]
    assert a.get("missing_documents") == b.get("missing_documents")
    ranks = {q["id"]: q for q in a["per_question"]}
    differ = [(q["id"], ranks[q["id"]], q) for q in b["per_question"] if ranks[q["id"]] != q]
    assert not differ, f"ranks differ between SQLite and PostgreSQL: {differ}"
    assert a["by_capability"] == b["by_capability"]
    assert a["modes"] == b["modes"]
