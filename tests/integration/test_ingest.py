"""Ingestion end to end on real files: robustness corpus, idempotence, atomicity; the store-level
tests run on both backends (SQLite and a real PostgreSQL: the ``backend`` fixture)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import psycopg
import pytest

from tests.helpers.corpus import ROBUSTNESS, SEED
from tests.helpers.ocr import SCANS, tesseract_missing
from tests.helpers.pg_server import BACKENDS, Backend
from truthbase.embed import HashingEmbedder
from truthbase.extract import extract_path
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.model import ChunkDraft
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.store import SQLiteStore, Store, StoreError
from truthbase.store.copy import copy_sqlite_index

pytestmark = pytest.mark.corpus  # every test ingests or extracts corpus files

# The specific reason each hostile file must fail with (MANIFEST.md); every other file ingests.
EXPECTED_FAILURES = {
    "pdfminer-aes-256.pdf": "encrypted",
    "pdfplumber-password-example.pdf": "encrypted",
    "pypdf-libreoffice-writer-password.pdf": "encrypted",
    "ocrmypdf-invalid.pdf": "corrupt",
    "derived-truncated-multicolumn.pdf": "corrupt",
    # the scans ingest through OCR; without Tesseract they fail with no_text
    **({name: "no_text" for name in SCANS} if tesseract_missing() is not None else {}),
}


def dump(db: Path) -> list[str]:
    """Every row of every table, to compare a database before and after."""
    connection = sqlite3.connect(db)
    try:
        return list(connection.iterdump())
    finally:
        connection.close()


# Ingesting the hostile corpus tests extraction and the store's atomicity, not search quality:
# the hashing embedder keeps it fast (GeoTopo alone is 117 pages).
FAST = HashingEmbedder()


@pytest.fixture(scope="module")
def robustness_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, tuple[str, str | None]]]:
    db = tmp_path_factory.mktemp("robust") / "robust.sqlite"
    store = SQLiteStore(db)
    try:
        summary = ingest_paths([ROBUSTNESS], store, FAST, IngestOptions())
    finally:
        store.close()
    outcomes = {o.path.name: (o.status, o.reason) for o in summary.outcomes}
    return db, outcomes


def test_every_robustness_file_ingests_or_fails_with_its_reason(
    robustness_run: tuple[Path, dict[str, tuple[str, str | None]]],
) -> None:
    _, outcomes = robustness_run
    assert len(outcomes) == len(list(ROBUSTNESS.glob("*.pdf"))) == 30
    for name, (status, reason) in outcomes.items():
        if name in EXPECTED_FAILURES:
            assert (status, reason) == ("failed", EXPECTED_FAILURES[name]), name
        else:
            assert status == "ingested", (name, reason)


@pytest.mark.parametrize("kind", BACKENDS)
def test_reingesting_changes_nothing(
    robustness_run: tuple[Path, dict[str, tuple[str, str | None]]],
    tmp_path: Path,
    kind: str,
) -> None:
    db, _ = robustness_run
    copy = tmp_path / "copy.sqlite"
    shutil.copy(db, copy)
    backend = Backend(kind, tmp_path / "unused")
    try:
        if kind == "sqlite":
            backend.location = str(copy)
        else:  # the same index in PostgreSQL (copied: no second extraction run)
            target = backend.open()
            try:
                copy_sqlite_index(copy, target)
            finally:
                target.close()
        before = backend.dump()
        store = backend.open()
        try:
            summary = ingest_paths([ROBUSTNESS], store, FAST, IngestOptions())
        finally:
            store.close()
        assert summary.count("ingested") == 0
        assert summary.count("unchanged") == 30 - len(EXPECTED_FAILURES)
        assert backend.dump() == before
    finally:
        backend.drop()


def test_a_failing_file_leaves_the_database_as_it_was(backend: Backend) -> None:
    store = backend.open()
    try:
        summary = ingest_paths(
            [ROBUSTNESS / "pdfminer-pagelabels.pdf"], store, FAST, IngestOptions()
        )
        assert summary.count("ingested") == 1
        before = backend.dump()
        summary = ingest_paths(
            [ROBUSTNESS / name for name in EXPECTED_FAILURES], store, FAST, IngestOptions()
        )
        assert len(summary.failed) == len(EXPECTED_FAILURES)
        assert backend.dump() == before
        # and ingesting the same file again is a no-op
        summary = ingest_paths(
            [ROBUSTNESS / "pdfminer-pagelabels.pdf"], store, FAST, IngestOptions()
        )
        assert summary.count("unchanged") == 1
        assert backend.dump() == before
    finally:
        store.close()


def test_an_error_midway_through_a_document_rolls_it_back(backend: Backend) -> None:
    """The transaction covers the document, its pages, chunks, full text and vectors."""
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    store = backend.open()
    try:
        good = ChunkDraft(unit=0, start=0, end=5, text=document.units[0].text[:5], rects=())
        # nothing can tokenize or bind an object: the last chunk fails after the document,
        # its pages and the first chunk were written inside the transaction
        bad = ChunkDraft(unit=0, start=0, end=5, text=object(), rects=())  # type: ignore[arg-type]
        vectors = np.ones((2, 4), dtype=np.float32) / 2
        before = backend.dump()
        with pytest.raises((sqlite3.Error, psycopg.Error, TypeError)):
            store.add_document(
                IndexedDocument(
                    document=document,
                    chunks=[good, bad],
                    vectors=vectors,
                    embedder=IndexEmbedder(model_id="m", dim=4),
                )
            )
        assert backend.dump() == before
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0, "token_chunks": 0}
        assert store.index_embedder() is None
        # the store is still usable after the failure
        store.add_document(
            IndexedDocument(
                document=document,
                chunks=[good],
                vectors=vectors[:1],
                embedder=IndexEmbedder(model_id="m", dim=4),
            )
        )
        assert store.counts()["chunks"] == 1
    finally:
        store.close()


def test_an_index_refuses_vectors_of_another_embedder(backend: Backend) -> None:
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    other = extract_path(ROBUSTNESS / "pdfminer-jo.pdf")
    store = backend.open()
    try:
        store.add_document(
            IndexedDocument(
                document=document,
                chunks=[],
                vectors=np.zeros((0, 4), np.float32),
                embedder=IndexEmbedder("a", 4),
            )
        )
        with pytest.raises(StoreError, match="built with a"):
            store.add_document(
                IndexedDocument(
                    document=other,
                    chunks=[],
                    vectors=np.zeros((0, 8), np.float32),
                    embedder=IndexEmbedder("b", 8),
                )
            )
        assert store.counts()["documents"] == 1
        assert store.index_embedder() == IndexEmbedder("a", 4)
    finally:
        store.close()


def test_stored_units_round_trip_text_and_boxes(any_seed_store: Store) -> None:
    document = extract_path(SEED / "self-rag.pdf")
    stored = any_seed_store.unit(document.sha256, 3)
    assert stored is not None
    original = document.units[3]
    assert stored.text == original.text
    assert stored.label == original.label
    assert stored.geometry == original.geometry
    for a, b in zip(stored.boxes, original.boxes, strict=True):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-3
