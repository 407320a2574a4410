"""Shared fixtures: the embedder, the seed and golden indexes (cached between runs, see
tests/helpers/indexes.py), both store backends; and the hooks of the ``corpus`` marker (the
policy is in tests/helpers/corpus.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import corpus, indexes
from tests.helpers.corpus import CORPUS_FIXTURES, GOLDEN_CAPABILITIES, SEED
from truthbase.blas import limit_blas_threads
from truthbase.embed import Embedder, default_embedder
from truthbase.store import SQLiteStore

if TYPE_CHECKING:  # the server module imports psycopg: unit tests do without it
    from tests.helpers.pg_server import PgServer

# The server answers only the Host names it serves (server.allowed_hosts; DNS rebinding):
# Starlette's TestClient sends "testserver", some in-process clients "t". As Django's test
# runner adds "testserver" to ALLOWED_HOSTS, the tests' settings add these to the loopback
# names (a test that passes its own ServerSettings gets the real default).
os.environ.setdefault(
    "TRUTHBASE_SERVER__ALLOWED_HOSTS",
    json.dumps(["localhost", "127.0.0.1", "::1", "testserver", "t"]),
)


def pytest_configure(config: pytest.Config) -> None:
    """The test run is a program's edge: one BLAS thread, as every ``truthbase`` command has."""
    limit_blas_threads()


# -- the corpus marker --------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(corpus.MARKER)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(corpus.MARKER) is None:
        return
    missing = corpus.corpus_missing()
    if missing is None:
        return
    if corpus.corpus_required():
        pytest.fail(f"CI must run the corpus tests: {missing}", pytrace=False)
    pytest.skip(missing)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for outcome in indexes.OUTCOMES:
        terminalreporter.write_line(f"test index cache: {outcome.describe()}")


# -- the indexes: built once, cached between runs; each run works on its own copies -------------


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return default_embedder()


@pytest.fixture(scope="session")
def seed_index(embedder: Embedder) -> indexes.CacheOutcome:
    """The cached seed index (never opened in place: tests use ``seed_db``)."""
    return indexes.seed_index(embedder)


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory: pytest.TempPathFactory, seed_index: indexes.CacheOutcome) -> Path:
    """This run's copy of the seed index: the four seed PDFs, exactly."""
    path = indexes.use_copy(seed_index.path, tmp_path_factory.mktemp("seed") / "seed.sqlite")
    stored = indexes.stored_paths(path)
    assert stored == {p.resolve() for p in SEED.glob("*.pdf")}, stored
    return path


@pytest.fixture(scope="session")
def golden_db(
    tmp_path_factory: pytest.TempPathFactory, seed_index: indexes.CacheOutcome, embedder: Embedder
) -> Path:
    """This run's copy of the golden index: the seed PDFs plus every other document of dev.json
    (the EPUB books), for the gates."""
    cached = indexes.golden_index(embedder, seed_index)
    path = indexes.use_copy(cached.path, tmp_path_factory.mktemp("golden") / "golden.sqlite")
    stored = indexes.stored_paths(path)
    wanted = indexes.golden_documents() | {p.resolve() for p in SEED.glob("*.pdf")}
    assert stored == wanted, (stored, wanted)
    return path


@pytest.fixture(scope="session")
def capabilities_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """This run's copy of the capabilities index: the documents of capabilities-dev.json that
    ingest (the scans fail until OCR lands; the evaluation counts their questions as misses)."""
    cached = indexes.capabilities_index(embedder)
    path = indexes.use_copy(cached.path, tmp_path_factory.mktemp("caps") / "capabilities.sqlite")
    stored = indexes.stored_paths(path)
    wanted = indexes.golden_documents(GOLDEN_CAPABILITIES)
    assert stored and stored <= wanted, (stored, wanted)
    return path


@pytest.fixture()
def seed_store(seed_db: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(seed_db)
    yield store
    store.close()


# -- both store backends: SQLite and a real PostgreSQL (tests/helpers/pg_server.py) ------------


@pytest.fixture(params=("sqlite", "postgres"))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh, empty store of each kind in turn (a ``pg_server.Backend``)."""
    from tests.helpers.pg_server import Backend

    created = Backend(request.param, tmp_path)
    yield created
    created.drop()


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    """The one PostgreSQL server of the test run (started on first use)."""
    from tests.helpers.pg_server import shared_server

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
    from tests.helpers.pg_server import copy_into_postgres

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
