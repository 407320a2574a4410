"""A chunk's text is stored once, in its unit (SQLite schema 22): read from there, equal to what
was chunked, searchable as before; a schema-21 index drops its chunks' copy on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import CHUNK_TEXT, SCHEMA_VERSION

EMBEDDER = IndexEmbedder("m", 4)
# Two pages, non-ASCII characters before the chunks (SQLite's substr counts characters, as
# Python's offsets do, not bytes), and a chunk that does not start at its unit's start.
PAGES = [
    "Größe über alles. 第一章 The first chunk here. Then the second one.",
    "Ünïcödé page: the third chunk is on page two.",
]


def _indexed() -> tuple[IndexedDocument, list[str]]:
    document = ExtractedDocument(
        sha256="a" * 64,
        title="Chunks",
        path="/a.pdf",
        kind="pdf",
        units=[
            Unit(index=i, text=text, boxes=[None] * len(text), language="en")
            for i, text in enumerate(PAGES)
        ],
        extractor_version="t",
        language="en",
    )
    spans = [(0, "The first chunk here."), (0, "Then the second one."), (1, "the third chunk")]
    chunks = []
    for unit, text in spans:
        start = PAGES[unit].index(text)
        chunks.append(
            ChunkDraft(unit=unit, start=start, end=start + len(text), text=text, rects=())
        )
    vectors = np.eye(len(chunks), 4, dtype=np.float32)
    indexed = IndexedDocument(document=document, chunks=chunks, vectors=vectors, embedder=EMBEDDER)
    return indexed, [text for _, text in spans]


def _ids(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT id FROM chunks ORDER BY id")]


def _columns(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[1] for row in db.execute("PRAGMA table_info(chunks)")}


def test_a_chunk_s_text_is_read_from_its_unit(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    indexed, texts = _indexed()
    store = SQLiteStore(path)
    try:
        store.add_document(indexed)
        ids = _ids(path)
        assert [c.text for c in store.chunks(ids)] == texts
        assert [store.chunk_texts(ids)[i] for i in ids] == texts
        # The full text is made from the chunk's text, as before.
        assert [hit.chunk_id for hit in store.fts_search("second", 10)] == [ids[1]]
    finally:
        store.close()
    assert "text" not in _columns(path)


def test_a_schema_21_index_drops_its_chunks_copy_of_their_text(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    indexed, texts = _indexed()
    store = SQLiteStore(path)
    store.add_document(indexed)
    store.close()
    with sqlite3.connect(path) as db:
        # As version 21 stored them: the text in the chunk's row too.
        db.execute("ALTER TABLE chunks ADD COLUMN text TEXT NOT NULL DEFAULT ''")
        db.execute(
            f"UPDATE chunks SET text = (SELECT {CHUNK_TEXT} FROM chunks c JOIN units u "
            "ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.id = chunks.id)"
        )
        db.execute("UPDATE meta SET value = '21' WHERE key = 'schema_version'")
        assert sorted(r[0] for r in db.execute("SELECT text FROM chunks")) == sorted(texts)
    store = SQLiteStore(path)  # opening it migrates it
    try:
        ids = _ids(path)
        assert [c.text for c in store.chunks(ids)] == texts
        assert [hit.chunk_id for hit in store.fts_search("third", 10)] == [ids[2]]
    finally:
        store.close()
    assert "text" not in _columns(path)
    with sqlite3.connect(path) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert int(version[0]) == SCHEMA_VERSION == 22
