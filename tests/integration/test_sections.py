"""A chunk's section path on both backends: stored and read back, searched in the full text's
title field (never its text), kept there when the document is renamed, and copied from SQLite
to PostgreSQL; a PostgreSQL database at version 14 gets the column on open (step 17)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
from fastapi.testclient import TestClient

from tests.helpers.pg_server import Backend, PgServer
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.server import create_app
from truthbase.store import SQLiteStore, Store
from truthbase.store.copy import copy_sqlite_index
from truthbase.store.postgres import SCHEMA_VERSION, PostgresStore

TEXT = "The critic is trained on reflection tokens. Grapes grow in the valley."
SECTION = "3 Self-RAG > 3.2.1 Training the Methodology Critic"


def _indexed() -> IndexedDocument:
    document = ExtractedDocument(
        sha256="a" * 64,
        title="A paper",
        path="/a.pdf",
        kind="pdf",
        units=[Unit(index=0, text=TEXT, boxes=[None] * len(TEXT), language="en")],
        extractor_version="t",
        language="en",
    )
    cut = TEXT.index("Grapes")
    chunks = [
        ChunkDraft(unit=0, start=0, end=cut - 1, text=TEXT[: cut - 1], rects=(), section=SECTION),
        ChunkDraft(unit=0, start=cut, end=len(TEXT), text=TEXT[cut:], rects=()),
    ]
    vectors = np.eye(2, 4, dtype=np.float32)
    return IndexedDocument(
        document=document, chunks=chunks, vectors=vectors, embedder=IndexEmbedder("m", 4)
    )


def _first(store: Store, question: str, title_weight: float) -> list[int]:
    """The chunk ids the full-text arm ranks for ``question``, best first."""
    hits = store.fts_search(build_fts_query(question, languages=["en"]), 5, title_weight)
    return [hit.chunk_id for hit in hits]


def test_a_section_is_stored_searched_as_title_and_kept_by_a_rename(backend: Backend) -> None:
    store = backend.open()
    try:
        store.add_document(_indexed())
        (grapes,) = _first(store, "grapes", 1.0)
        (critic,) = _first(store, "methodology", 1.0)
        chunks = store.chunks([critic, grapes])
        assert [c.section for c in chunks] == [SECTION, ""]
        assert "Methodology" not in chunks[0].text  # the span is the page's text alone
        assert _first(store, "methodology", 0.0) == []  # the title field, not the text
        assert store.rename_document("a" * 64, "Another name")
        assert _first(store, "methodology", 1.0) == [critic]
        assert _first(store, "another name", 1.0) != []
    finally:
        store.close()


def test_sections_are_copied_from_sqlite_to_postgres(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "s.sqlite"
    sqlite = SQLiteStore(source)
    try:
        sqlite.add_document(_indexed())
    finally:
        sqlite.close()
    store = PostgresStore(pg_url)
    try:
        assert copy_sqlite_index(source, store) == 1
        (critic,) = _first(store, "methodology", 1.0)
        assert store.chunks([critic])[0].section == SECTION
    finally:
        store.close()


def test_a_version_14_postgres_database_gets_the_section_column(
    pg_server: PgServer, pg_url: str
) -> None:
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE truthbase.chunks DROP COLUMN section")
        conn.execute("UPDATE truthbase.meta SET value = '14' WHERE key = 'schema_version'")
    store = PostgresStore(pg_url)
    try:
        store.add_document(_indexed())
        (critic,) = _first(store, "methodology", 1.0)
        assert store.chunks([critic])[0].section == SECTION
    finally:
        store.close()
    with psycopg.connect(pg_url) as conn:
        version = conn.execute("SELECT value FROM truthbase.meta WHERE key = 'schema_version'")
        assert version.fetchone() == (str(SCHEMA_VERSION),)
        assert SCHEMA_VERSION == 19


def test_api_search_hits_show_the_section(tmp_path: Path, embedder: Embedder) -> None:
    indexed = _indexed()
    texts = [c.text for c in indexed.chunks]
    store = SQLiteStore(tmp_path / "api.sqlite")
    try:
        store.add_document(
            IndexedDocument(
                document=indexed.document,
                chunks=indexed.chunks,
                vectors=np.asarray(embedder.embed(texts), dtype=np.float32),
                embedder=IndexEmbedder(model_id=embedder.model_id, dim=embedder.dim),
            )
        )
    finally:
        store.close()
    with TestClient(create_app(Settings(db=tmp_path / "api.sqlite"))) as client:
        results = client.get("/api/search", params={"q": "methodology critic", "k": 2}).json()
        first = results["results"][0]
        assert first["section"] == SECTION
        assert first["text"] == TEXT[: TEXT.index("Grapes") - 1]
        assert [r["section"] for r in results["results"][1:]] == [""]
