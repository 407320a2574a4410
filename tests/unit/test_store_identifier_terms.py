"""An SQLite index made before identifiers were whole full-text terms (version 12) gets its
terms made again on open (version 14): a macro, an option and a flag then find their chunk, in
the text and in a table chunk's context. (PostgreSQL's step: test_identifiers_in_text.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import CHUNK_TEXT, SCHEMA_VERSION
from truthbase.text.fulltext import term_string

EMBEDDER = IndexEmbedder("m", 4)
TEXTS = [
    r"Use \cmidrule{2-3} for a partial rule",
    "Wrap long lines with breaklines=true",
    "Start it with --no-sandbox in a container",
]


def _indexed() -> IndexedDocument:
    text = " ".join(TEXTS)
    document = ExtractedDocument(
        sha256="a",
        title="Manual of os_path",
        path="/a.pdf",
        kind="pdf",
        units=[Unit(index=0, text=text, boxes=[None] * len(text), language="en")],
        extractor_version="t",
        language="en",
    )
    chunks, start = [], 0
    for t in TEXTS:
        chunks.append(ChunkDraft(unit=0, start=start, end=start + len(t), text=t, rects=()))
        start += len(t) + 1
    vectors = np.eye(len(TEXTS), 4, dtype=np.float32)
    return IndexedDocument(document=document, chunks=chunks, vectors=vectors, embedder=EMBEDDER)


def _match(db: sqlite3.Connection, question: str) -> list[int]:
    rows = db.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts)",
        (build_fts_query(question, languages=["en"]),),
    ).fetchall()
    return [rowid for (rowid,) in rows]


def _has(db: sqlite3.Connection, term: str) -> list[int]:
    rows = db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',))
    return [rowid for (rowid,) in rows.fetchall()]


def test_a_version_12_index_gets_its_terms_made_again(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    store = SQLiteStore(path)
    store.add_document(_indexed())
    store.close()
    db = sqlite3.connect(path)
    # As version 12 stored them: the words only, no identifier's whole term.
    for chunk_id, text in db.execute(
        f"SELECT c.id, {CHUNK_TEXT} FROM chunks c "
        "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit"
    ).fetchall():
        old = " ".join(term_string(w, "en") for w in text.split())
        old = " ".join(t for t in old.split() if t.isascii())
        db.execute("UPDATE chunks SET terms = ? WHERE id = ?", (old, chunk_id))
    db.execute("UPDATE documents SET title_terms = 'manual of os path'")
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    db.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    db.commit()
    assert _has(db, "＼cmidrule") == []  # no whole term in the old index
    db.close()

    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert int(version[0]) == SCHEMA_VERSION == 22
        terms = [row[0] for row in db.execute("SELECT terms FROM chunks ORDER BY id")]
        assert terms == [term_string(t, "en") for t in TEXTS]
        title = db.execute("SELECT title_terms FROM documents").fetchone()[0]
        assert title == term_string("Manual of os_path", "en")
        assert _has(db, "＼cmidrule") == [1]
        assert _match(db, r"\cmidrule")[0] == 1
        assert _match(db, "breaklines=true")[0] == 2
        assert _match(db, "--no-sandbox")[0] == 3
        assert _has(db, "os＿path") == [1, 2, 3]  # the title's whole term, on every chunk
    finally:
        db.close()
