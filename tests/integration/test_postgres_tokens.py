"""Per-chunk token signs on both backends (a real SQLite file, a real PostgreSQL): round trip by
chunk id, removal with the document, validation, the copy of an SQLite index into PostgreSQL and
PostgreSQL's migration 4 -> 5. (SQLite's own upgrade 5 -> 6: tests/unit/test_store_tokens.py.)"""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import psycopg
import pytest

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.pg_server import Backend, PgServer, pg_dump
from tests.helpers.token_data import EMBEDDER, chunks_of, random_signs, unit_vectors
from truthbase.extract import extract_path
from truthbase.records import IndexedDocument
from truthbase.store import SQLiteStore
from truthbase.store.copy import copy_sqlite_index
from truthbase.store.postgres import SCHEMA_VERSION, PostgresStore


def _delete_document(backend: Backend, doc_id: str) -> None:
    if backend.kind == "postgres":
        with psycopg.connect(backend.location, autocommit=True) as conn:
            conn.execute("DELETE FROM truthbase.documents WHERE id = %s", (doc_id,))
        return
    db = sqlite3.connect(backend.location)
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
    db.commit()
    db.close()


@pytest.mark.corpus
def test_token_signs_round_trip_by_id_and_leave_with_their_document(backend: Backend) -> None:
    with_tokens = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    without = extract_path(ROBUSTNESS / "pdfminer-jo.pdf")
    signs = random_signs([9, 1, 300], 1)  # 300 tokens: 900 bytes
    store = backend.open()
    try:
        chunks = chunks_of(with_tokens, 3)
        store.add_document(
            IndexedDocument(
                document=with_tokens,
                chunks=chunks,
                vectors=unit_vectors(3, 1),
                embedder=EMBEDDER,
                token_signs=signs,
            )
        )
        store.add_document(
            IndexedDocument(
                document=without,
                chunks=chunks_of(without, 2),
                vectors=unit_vectors(2, 2),
                embedder=EMBEDDER,
            )
        )
        assert store.counts()["token_chunks"] == 3 and store.counts()["chunks"] == 5
        ids = [c.id for c in store.chunks(list(range(1, 6))) if c.doc_id == with_tokens.sha256]
        other = [c.id for c in store.chunks(list(range(1, 6))) if c.doc_id == without.sha256]
        assert len(ids) == 3 and len(other) == 2
        assert store.token_signs(ids) == dict(zip(ids, signs, strict=True))
        got = store.token_signs([other[0], ids[1], 12345, ids[1]])
        assert got == {ids[1]: signs[1]}
        assert all(type(blob) is bytes for blob in got.values())
        assert store.token_signs([]) == {} and store.token_signs(other) == {}
    finally:
        store.close()
    _delete_document(backend, with_tokens.sha256)
    store = backend.open()
    try:
        assert store.token_signs(ids + other) == {}
        assert store.counts()["token_chunks"] == 0 and store.counts()["chunks"] == 2
    finally:
        store.close()


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("signs", "message"),
    [
        ([b"\x00\x00\x00"], "2 chunks but 1 token sign blobs"),
        ([b"\x00\x00\x00", b"\x00\x00"], "chunk 1 are 2 bytes, not a positive multiple of 3"),
        ([b"", b"\x00\x00\x00"], "chunk 0 are 0 bytes"),
    ],
)
def test_bad_token_signs_write_nothing(backend: Backend, signs: list[bytes], message: str) -> None:
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    store = backend.open()
    try:
        before = backend.dump()
        with pytest.raises(ValueError, match=message):
            store.add_document(
                IndexedDocument(
                    document=document,
                    chunks=chunks_of(document, 2),
                    vectors=unit_vectors(2, 0),
                    embedder=EMBEDDER,
                    token_signs=signs,
                )
            )
        assert backend.dump() == before
    finally:
        store.close()


@pytest.mark.corpus
def test_the_copy_into_postgres_carries_the_token_signs(tmp_path: Path, pg_url: str) -> None:
    with_tokens = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    without = extract_path(ROBUSTNESS / "pdfminer-jo.pdf")
    source = SQLiteStore(tmp_path / "source.sqlite")
    try:
        source.add_document(
            IndexedDocument(
                document=without,
                chunks=chunks_of(without, 2),
                vectors=unit_vectors(2, 2),
                embedder=EMBEDDER,
            )
        )
        chunks = chunks_of(with_tokens, 3)
        signs = random_signs([2, 5, 3], 3)
        source.add_document(
            IndexedDocument(
                document=with_tokens,
                chunks=chunks,
                vectors=unit_vectors(3, 3),
                embedder=EMBEDDER,
                token_signs=signs,
            )
        )
        want = source.token_signs(range(1, 6))
        want_counts = source.counts()
    finally:
        source.close()
    assert sorted(want) == [3, 4, 5]
    target = PostgresStore(pg_url)
    try:
        assert copy_sqlite_index(tmp_path / "source.sqlite", target) == 2
        assert target.token_signs(range(1, 6)) == want
        assert target.counts() == want_counts
    finally:
        target.close()


def test_a_version_4_database_is_migrated_to_5(pg_server: PgServer, pg_url: str) -> None:
    """Schema 4 with chunks in it: opening it adds the empty chunk_tokens table (and migration 6
    the chunks' terms), the same as a new database holding the same rows; the chunks are kept
    and take token data from then on."""
    store_sql = resources.files("truthbase.store.postgres")
    rows = (
        "INSERT INTO truthbase.documents VALUES ('d', 'Risk', '-', 'pdf', 1, '', '', '{}', "
        "NULL, NULL); "
        "INSERT INTO truthbase.units(doc_id, idx, text) VALUES ('d', 0, ''); "
        'INSERT INTO truthbase.chunks(doc_id, unit, start, "end", text, title, rects, vector) '
        "VALUES ('d', 0, 0, 0, 'risk of risks', 'Risk', '[]', '[1,0]'), "
        "('d', 0, 0, 0, 'the govern function', 'Risk', '[]', '[0,1]')"
    )
    # in a new database, with the full-text terms migration 6 makes for them (no language:
    # the unit has no letters)
    fresh_rows = (
        rows.replace(
            "title, rects, vector) VALUES", "title, rects, vector, terms, title_terms) VALUES"
        )
        .replace("'[1,0]')", "'[1,0]', 'risk of risks', 'risk')")
        .replace("'[0,1]')", "'[0,1]', 'the govern function', 'risk')")
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for name in (
            "schema.sql",
            "migration_2.sql",
            "migration_3.sql",
            "migration_4.sql",
        ):
            conn.execute(store_sql.joinpath(name).read_text("utf-8"))
        conn.execute("INSERT INTO truthbase.meta VALUES ('schema_version', '4')")
        conn.execute(rows)
        assert conn.execute("SELECT to_regclass('truthbase.chunk_tokens')").fetchone() == (None,)
    fresh = pg_server.create_database()
    try:
        PostgresStore(fresh).close()
        with psycopg.connect(fresh, autocommit=True) as conn:
            conn.execute(fresh_rows)
        store = PostgresStore(pg_url)
        try:
            assert pg_dump(pg_url) == pg_dump(fresh)
            with psycopg.connect(pg_url) as conn:
                assert conn.execute(
                    "SELECT value FROM truthbase.meta WHERE key = 'schema_version'"
                ).fetchone() == (str(SCHEMA_VERSION),)
            # 6 accounts, 7 jobs, 8 languages, 9 OCR, 10 chunk kind, 11 user ids, 12 sessions and
            # tokens by user id, 13 identifiers as whole full-text terms, 14 packed glyph boxes,
            # 15 threads, 16 collections, 17 section paths, 18 feedback
            assert SCHEMA_VERSION == 19
            assert [c.text for c in store.chunks([1, 2])] == [
                "risk of risks",
                "the govern function",
            ]
            assert store.token_signs([1, 2]) == {}
            assert store.counts() == {"documents": 1, "units": 1, "chunks": 2, "token_chunks": 0}
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute("INSERT INTO truthbase.chunk_tokens VALUES (2, '\\x0102')")
            assert store.token_signs([1, 2]) == {2: b"\x01\x02"}
        finally:
            store.close()
    finally:
        pg_server.drop_database(fresh)
