"""Shared fixtures: the real corpus beside the repository, and one ingested seed index."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from truthbase.config import ChunkingSettings
from truthbase.embed import Embedder, default_embedder
from truthbase.ingest import ingest_paths
from truthbase.store import SQLiteStore

if TYPE_CHECKING:  # the server module imports psycopg: unit tests do without it
    from tests.integration.pg_server import PgServer

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SEED = CORPUS / "seed"
ROBUSTNESS = CORPUS / "robustness"
GOLDEN_DEV = SHARED / "golden" / "dev.json"


def pytest_configure(config: pytest.Config) -> None:
    if not SEED.is_dir():
        raise pytest.UsageError(f"the shared corpus is missing: expected {SEED}")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return default_embedder()


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """An index of the four seed PDFs with the default settings, built once per run."""
    path = tmp_path_factory.mktemp("seed") / "seed.sqlite"
    store = SQLiteStore(path)
    try:
        summary = ingest_paths([SEED], store, embedder, ChunkingSettings())
    finally:
        store.close()
    assert not summary.failed, [(o.path, o.message) for o in summary.failed]
    assert summary.count("ingested") == 4
    return path


@pytest.fixture(scope="session")
def golden_db(tmp_path_factory: pytest.TempPathFactory, seed_db: Path, embedder: Embedder) -> Path:
    """The seed index plus every other document of dev.json (the EPUB books), for the gates.

    A copy: tests that read ``seed_db`` expect exactly the four seed PDFs.
    """
    from truthbase.eval.golden import default_corpus_root, load_golden
    from truthbase.eval.retrieval import prepare_corpus

    path = tmp_path_factory.mktemp("golden") / "golden.sqlite"
    shutil.copy(seed_db, path)
    store = SQLiteStore(path)
    try:
        prepared = prepare_corpus(
            load_golden(GOLDEN_DEV),
            default_corpus_root(GOLDEN_DEV),
            store,
            embedder,
            ChunkingSettings(),
        )
    finally:
        store.close()
    assert not prepared.skipped_documents, prepared.skipped_documents
    return path


@pytest.fixture()
def seed_store(seed_db: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(seed_db)
    yield store
    store.close()


# -- both store backends: SQLite and a real PostgreSQL (tests/integration/pg_server.py) --------


@pytest.fixture(params=("sqlite", "postgres"))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh, empty store of each kind in turn (a ``pg_server.Backend``)."""
    from tests.integration.pg_server import Backend

    created = Backend(request.param, tmp_path)
    yield created
    created.drop()


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    """The one PostgreSQL server of the test run (started on first use)."""
    from tests.integration.pg_server import shared_server

    return shared_server()


@pytest.fixture()
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database, dropped after the test."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(scope="session")
def pg_seed_url(seed_db: Path) -> str:
    """A PostgreSQL copy of the session's seed index (same chunks, same vectors), read-only."""
    from tests.integration.pg_server import copy_into_postgres

    return copy_into_postgres(seed_db, "seed")


@pytest.fixture(params=("sqlite", "postgres"))
def any_seed_store(request: pytest.FixtureRequest, seed_db: Path) -> Iterator[Any]:
    """The seed index on each backend in turn (read-only)."""
    if request.param == "sqlite":
        store: Any = SQLiteStore(seed_db)
    else:
        from truthbase.store.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_seed_url"))
    yield store
    store.close()
