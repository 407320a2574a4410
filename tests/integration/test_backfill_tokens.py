"""Token signs for an index built before they were stored (truthbase.ingest.backfill and
`truthbase docs --add-token-signs`): a copy of the seed index loses its signs, as an index from
before SQLite schema 6 (PostgreSQL migration 5) has none, gains them back equal to what ingest
stored, and the late-interaction list ranks its chunks again. Store-level: add_token_signs and
chunks_without_token_signs on both backends (a real SQLite file, a real PostgreSQL)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.indexes import copy_db
from tests.helpers.pg_server import Backend, copy_into_postgres, shared_server
from tests.helpers.token_data import EMBEDDER, chunks_of, random_signs, unit_vectors
from truthbase.cli import cli
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder, EmbedderMismatchError, HashingEmbedder, TokenEmbedder
from truthbase.extract import extract_path
from truthbase.ingest.backfill import backfill_token_signs, chunk_inputs
from truthbase.model import ExtractedDocument
from truthbase.records import IndexedDocument, IndexEmbedder, token_sign_row_bytes
from truthbase.retrieve.hybrid import LATE_ARM, search
from truthbase.store import SQLiteStore, Store
from truthbase.store.postgres import PostgresStore

HINT = re.compile(
    r"(\d+) of (\d+) chunks have no token signs \(ingested before schema 6, or with "
    r"chunking.token_signs off\): late interaction skips them; run "
    r"`truthbase docs --add-token-signs`"
)
QUESTION = "How should an organization drive every risk down to zero?"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def _sqlite_signs(db: Path) -> dict[int, bytes]:
    con = sqlite3.connect(db)
    try:
        return {
            int(i): bytes(b) for i, b in con.execute("SELECT chunk_id, signs FROM chunk_tokens")
        }
    finally:
        con.close()


def _as_schema_5(db: Path) -> None:
    """The index as SQLite schema 5 left it: no chunk_tokens table (opening it adds one)."""
    con = sqlite3.connect(db)
    try:
        con.execute("DROP TABLE chunk_tokens")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
        con.commit()
    finally:
        con.close()


def _assert_same_bits(got: dict[int, bytes], want: dict[int, bytes], dim: int) -> None:
    """Each chunk's signs equal the ones ingest stored, bit for bit but for float noise (the
    ONNX batches pad differently here than at ingest)."""
    assert sorted(got) == sorted(want)
    worst = 1.0
    for chunk_id, blob in want.items():
        assert len(got[chunk_id]) == len(blob), chunk_id  # same tokens: same rows
        a = np.unpackbits(np.frombuffer(blob, dtype=np.uint8))
        b = np.unpackbits(np.frombuffer(got[chunk_id], dtype=np.uint8))
        worst = min(worst, float(np.mean(a == b)))
    assert worst >= 0.999, f"a chunk's signs differ in {1 - worst:.4%} of bits"


def _late_in_hits(store: Store, embedder: Embedder) -> bool:
    result = search(store, embedder, QUESTION, RetrievalSettings())
    return any(LATE_ARM in hit.arm_ranks for hit in result.hits)


@pytest.mark.slow
def test_docs_adds_token_signs_to_an_index_from_schema_5(
    seed_db: Path, tmp_path: Path, embedder: Embedder
) -> None:
    original = _sqlite_signs(seed_db)
    db = copy_db(seed_db, tmp_path / "old.sqlite")
    _as_schema_5(db)
    store = SQLiteStore(db)  # upgraded in place: an empty chunk_tokens table
    try:
        assert store.counts()["token_chunks"] == 0
        assert not _late_in_hits(store, embedder)
    finally:
        store.close()

    code, out = run("--db", str(db), "docs")
    assert code == 0
    hint = HINT.search(out)
    assert hint is not None, out
    assert int(hint[1]) == int(hint[2]) == len(original) > 100

    code, out = run("--db", str(db), "docs", "--add-token-signs")
    assert code == 0, out
    assert f"added token signs to {len(original)} chunks" in out
    _assert_same_bits(_sqlite_signs(db), original, embedder.dim)

    code, out = run("--db", str(db), "docs", "--add-token-signs")
    assert code == 0 and "added token signs to 0 chunks" in out
    code, out = run("--db", str(db), "docs")
    assert code == 0 and "token signs" not in out and "4 documents" in out
    store = SQLiteStore(db)
    try:
        assert store.chunks_without_token_signs() == []
        assert _late_in_hits(store, embedder)
    finally:
        store.close()


@pytest.mark.slow
def test_docs_adds_the_missing_token_signs_in_postgres(
    seed_db: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """One document's chunks lose their signs; the backfill adds exactly those, in batches
    (progress reported after each), and leaves the others' rows as they were."""
    url = copy_into_postgres(seed_db)
    env = {"TRUTHBASE_DATABASE_URL": url}
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            doc_id, n_chunks = conn.execute(
                "SELECT doc_id, count(*) FROM truthbase.chunks GROUP BY doc_id ORDER BY 2 LIMIT 1"
            ).fetchone()
            before = {
                int(i): bytes(b)
                for i, b in conn.execute("SELECT chunk_id, signs FROM truthbase.chunk_tokens")
            }
            lost = [
                int(r[0])
                for r in conn.execute(
                    "DELETE FROM truthbase.chunk_tokens t USING truthbase.chunks c "
                    "WHERE c.id = t.chunk_id AND c.doc_id = %s RETURNING t.chunk_id",
                    (doc_id,),
                )
            ]
        assert len(lost) == n_chunks and len(before) > n_chunks

        code, out = run("docs", env=env)
        assert code == 0
        hint = HINT.search(out)
        assert hint is not None, out
        assert (int(hint[1]), int(hint[2])) == (n_chunks, len(before))

        store = PostgresStore(url)
        try:
            assert store.chunks_without_token_signs() == sorted(lost)
            progress: list[tuple[int, int]] = []
            report = backfill_token_signs(
                store,
                embedder,
                ChunkingSettings(),
                batch=7,
                on_progress=lambda done, total: progress.append((done, total)),
            )
            assert (report.missing, report.added, report.skipped_reason) == (
                n_chunks,
                n_chunks,
                None,
            )
            assert progress[0] == (0, n_chunks) and progress[-1] == (n_chunks, n_chunks)
            assert len(progress) == 1 + -(-n_chunks // 7)
            got = store.token_signs(list(before))
            _assert_same_bits(got, before, embedder.dim)
            assert {i: got[i] for i in before if i not in lost} == {
                i: b for i, b in before.items() if i not in lost
            }
            assert _late_in_hits(store, embedder)
        finally:
            store.close()
        code, out = run("docs", "--add-token-signs", env=env)
        assert code == 0 and "added token signs to 0 chunks" in out
    finally:
        shared_server().drop_database(url)


@pytest.mark.slow
def test_an_embedder_without_token_vectors_is_refused(seed_db: Path, tmp_path: Path) -> None:
    db = copy_db(seed_db, tmp_path / "old.sqlite")
    _as_schema_5(db)
    # An OpenAI-compatible endpoint: refused before any request (nothing listens on port 9).
    env = {
        "TRUTHBASE_EMBEDDER__NAME": "openai:text-embedding-3-small",
        "TRUTHBASE_EMBEDDER__BASE_URL": "http://127.0.0.1:9/v1",
    }
    result = CliRunner().invoke(cli, ["--db", str(db), "docs", "--add-token-signs"], env=env)
    assert result.exit_code == 2
    assert "has no token vectors" in result.output
    store = SQLiteStore(db)
    try:
        assert store.counts()["token_chunks"] == 0
        report = backfill_token_signs(store, HashingEmbedder(384), ChunkingSettings())
        assert report.missing == store.counts()["chunks"] and report.added == 0
        assert report.skipped_reason is not None and "has no token vectors" in report.skipped_reason
        assert store.counts()["token_chunks"] == 0
    finally:
        store.close()


def _add_unsigned(store: Store, n: int, recorded: IndexEmbedder, dim: int) -> ExtractedDocument:
    """A real PDF's first ``n`` small chunks stored with random vectors of ``dim`` and no token
    signs, as an index whose embedder is ``recorded`` holds them; returns the document."""
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    store.add_document(
        IndexedDocument(
            document=document,
            chunks=chunks_of(document, n),
            vectors=unit_vectors(n, 0, dim),
            embedder=recorded,
        )
    )
    return document


@pytest.mark.corpus
def test_another_models_token_vectors_are_refused(tmp_path: Path, embedder: Embedder) -> None:
    """An index of one model (with no token signs) and the bundled MiniLM: the mismatch error
    that search gives, before anything is embedded or written."""
    store = SQLiteStore(tmp_path / "t.sqlite")
    try:
        _add_unsigned(store, 2, IndexEmbedder("o", 384), embedder.dim)
        with pytest.raises(EmbedderMismatchError, match="'o'"):
            backfill_token_signs(store, embedder, ChunkingSettings())
        assert store.counts()["token_chunks"] == 0
    finally:
        store.close()


@pytest.mark.corpus
def test_backfill_without_punctuation_rows_stores_each_chunks_word_pieces(
    tmp_path: Path, embedder: Embedder
) -> None:
    """``chunking.punctuation_tokens`` off: the backfill stores a chunk's rows of the word pieces
    that hold a letter or a digit, as ingest does; on, every piece's row."""
    rows: dict[bool, dict[int, int]] = {}
    pieces: list[tuple[int, int]] = []
    for punctuation in (True, False):
        store = SQLiteStore(tmp_path / f"punctuation-{punctuation}.sqlite")
        try:
            document = _add_unsigned(
                store, 3, IndexEmbedder(embedder.model_id, embedder.dim), embedder.dim
            )
            chunking = ChunkingSettings(punctuation_tokens=punctuation)
            report = backfill_token_signs(store, embedder, chunking)
            assert report.added == report.missing == 3
            assert store.chunks_without_token_signs() == []
            chunks = store.chunks([1, 2, 3])
            row_bytes = token_sign_row_bytes(embedder.dim)
            rows[punctuation] = {
                i: len(blob) // row_bytes for i, blob in store.token_signs([1, 2, 3]).items()
            }
            if not pieces:
                titles = {document.sha256: document.title}
                assert isinstance(embedder, TokenEmbedder)
                _, tokens = embedder.embed_with_tokens(
                    chunk_inputs(chunks, titles, chunking.title_context)
                )
                assert tokens is not None
                pieces = [
                    (len(t.tokens), sum(any(ch.isalnum() for ch in p) for p in t.tokens))
                    for t in tokens
                ]
        finally:
            store.close()
    assert [rows[True][i] for i in (1, 2, 3)] == [every for every, _ in pieces]
    assert [rows[False][i] for i in (1, 2, 3)] == [words for _, words in pieces]
    assert all(words < every for every, words in pieces)  # "-" of the title, "(", ")"


# -- the store: add_token_signs, chunks_without_token_signs on both backends -----------------


def _two_documents(store: Store) -> tuple[list[int], list[int], list[bytes]]:
    """A document with token signs (3 chunks) and one without (2): (ids with, ids without,
    the stored signs)."""
    with_tokens = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    without = extract_path(ROBUSTNESS / "pdfminer-jo.pdf")
    signs = random_signs([4, 1, 9], 1)
    store.add_document(
        IndexedDocument(
            document=without,
            chunks=chunks_of(without, 2),
            vectors=unit_vectors(2, 2),
            embedder=EMBEDDER,
        )
    )
    store.add_document(
        IndexedDocument(
            document=with_tokens,
            chunks=chunks_of(with_tokens, 3),
            vectors=unit_vectors(3, 1),
            embedder=EMBEDDER,
            token_signs=signs,
        )
    )
    chunks = store.chunks(list(range(1, 6)))
    return (
        [c.id for c in chunks if c.doc_id == with_tokens.sha256],
        [c.id for c in chunks if c.doc_id == without.sha256],
        signs,
    )


@pytest.mark.corpus
def test_add_token_signs_fills_only_the_missing(backend: Backend) -> None:
    store = backend.open()
    try:
        assert store.chunks_without_token_signs() == [] and store.add_token_signs({}) == 0
        with_ids, without_ids, signs = _two_documents(store)
        assert store.chunks_without_token_signs() == sorted(without_ids)
        new = random_signs([2, 300], 2)  # 300 tokens: 900 bytes
        other = random_signs([5], 3)[0]
        # a chunk that has signs keeps its own; the missing ones are added
        added = store.add_token_signs(
            {without_ids[1]: new[1], with_ids[0]: other, without_ids[0]: new[0]}
        )
        assert added == 2
        assert store.chunks_without_token_signs() == []
        assert store.token_signs(with_ids + without_ids) == {
            **dict(zip(with_ids, signs, strict=True)),
            **dict(zip(without_ids, new, strict=True)),
        }
        assert all(type(b) is bytes for b in store.token_signs(without_ids).values())
        assert store.add_token_signs({without_ids[0]: other}) == 0
        assert store.counts()["token_chunks"] == 5
    finally:
        store.close()


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("unknown", r"no chunks with ids \[4242\] \(1 unknown\)"),
        ("short", "are 2 bytes, not a positive multiple of 3"),
        ("empty", "are 0 bytes"),
        ("str", "are str, not bytes"),
    ],
)
def test_bad_token_signs_write_nothing(backend: Backend, bad: str, message: str) -> None:
    store = backend.open()
    try:
        _, without_ids, _ = _two_documents(store)
        before = backend.dump()
        good = random_signs([3], 4)[0]
        blobs: dict[int, object] = {without_ids[0]: good}
        if bad == "unknown":
            blobs[4242] = good
        else:
            blobs[without_ids[1]] = {"short": b"\x00\x00", "empty": b"", "str": "abc"}[bad]
        with pytest.raises(ValueError, match=message):
            store.add_token_signs(blobs)
        assert backend.dump() == before
        assert store.chunks_without_token_signs() == sorted(without_ids)
    finally:
        store.close()


def test_an_empty_index_has_nothing_to_backfill(tmp_path: Path, embedder: Embedder) -> None:
    store = SQLiteStore(tmp_path / "empty.sqlite")
    try:
        report = backfill_token_signs(store, embedder, ChunkingSettings())
        assert (report.missing, report.added, report.skipped_reason) == (0, 0, None)
        with pytest.raises(ValueError, match="no embedder recorded"):
            store.add_token_signs({1: b"\x00" * 48})
    finally:
        store.close()
    code, out = run("--db", str(tmp_path / "empty.sqlite"), "docs")
    assert code == 0 and "No documents yet" in out and "token signs" not in out
