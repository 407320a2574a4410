"""The web app over a copy of the seed index with accounts, on one backend (a real SQLite file,
or a real PostgreSQL database on the shared server: tests/helpers/pg_server.py), for the tests
of the doors over saved threads, shares, feedback and exports: its test client, the same index
as the CLI reaches it, a store to change it behind the app's back, and signing in."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

from tests.helpers.indexes import use_copy
from truthbase import accounts
from truthbase.config import AuthSettings, ServerSettings, Settings
from truthbase.server import create_app
from truthbase.store import SQLiteStore, Store

__all__ = ["PASSWORD", "Site", "login", "open_site"]

PASSWORD = "correct horse battery"


@dataclass
class Site:
    """The app over one backend: ``kind`` sqlite or postgres; ``sqlite_path`` the index file
    (SQLite), ``pg_url`` the database (PostgreSQL)."""

    kind: str
    settings: Settings
    client: TestClient
    sqlite_path: Path | None
    pg_url: str | None

    def store(self) -> Store:
        """The index, opened apart from the app (close it)."""
        if self.pg_url is None:
            assert self.sqlite_path is not None
            return SQLiteStore(self.sqlite_path)
        from truthbase.store.postgres import PostgresStore

        return PostgresStore(self.pg_url)

    @property
    def cli_args(self) -> list[str]:
        """The CLI's global options that reach this index."""
        return ["--db", str(self.sqlite_path)] if self.pg_url is None else []

    @property
    def cli_env(self) -> dict[str, str]:
        """The CLI's environment that reaches this index."""
        return {} if self.pg_url is None else {"TRUTHBASE_DATABASE_URL": self.pg_url}

    def change_unit_text(self, doc_id: str, unit: int, start: int, end: int) -> None:
        """The page's stored text with ``[start, end)`` overwritten (same length), as a
        re-ingest by another extractor leaves a page whose text differs there."""

        def changed(text: str) -> str:
            return text[:start] + "Z" * (end - start) + text[end:]

        if self.pg_url is None:
            assert self.sqlite_path is not None
            db = sqlite3.connect(self.sqlite_path)
            with db:
                (text,) = db.execute(
                    "SELECT text FROM units WHERE doc_id = ? AND idx = ?", (doc_id, unit)
                ).fetchone()
                db.execute(
                    "UPDATE units SET text = ? WHERE doc_id = ? AND idx = ?",
                    (changed(text), doc_id, unit),
                )
            db.close()
            return
        import psycopg

        with psycopg.connect(self.pg_url) as conn:
            (text,) = conn.execute(
                "SELECT text FROM truthbase.units WHERE doc_id = %s AND idx = %s", (doc_id, unit)
            ).fetchone()  # type: ignore[misc]
            conn.execute(
                "UPDATE truthbase.units SET text = %s WHERE doc_id = %s AND idx = %s",
                (changed(text), doc_id, unit),
            )


@contextmanager
def open_site(
    kind: str, seed_db: Path, folder: Path, users: Sequence[tuple[str, bool]]
) -> Iterator[Site]:
    """The app over a copy of the seed index in ``folder`` on backend ``kind``, with ``users``
    (name, admin) whose password is :data:`PASSWORD`; a PostgreSQL database is dropped after."""
    db = use_copy(seed_db, folder / "seed.sqlite")
    store = SQLiteStore(db)
    try:
        for name, admin in users:
            accounts.add_user(store, name, PASSWORD, admin=admin)
    finally:
        store.close()
    auth = AuthSettings(secret_key_file=folder / "secret.key")
    server = ServerSettings(allowed_hosts=["testserver"])
    url = None
    if kind == "sqlite":
        settings = Settings(db=db, auth=auth, server=server)
    else:
        from tests.helpers.pg_server import copy_into_postgres

        url = copy_into_postgres(db)  # the documents and the accounts, with their ids
        settings = Settings(db=folder / "unused.sqlite", database_url=url, auth=auth, server=server)
    try:
        with TestClient(create_app(settings)) as client:
            yield Site(kind, settings, client, db if url is None else None, url)
    finally:
        if url is not None:
            from tests.helpers.pg_server import shared_server

            shared_server().drop_database(url)


def login(client: TestClient, name: str) -> dict[str, str]:
    """Sign ``name`` in: the headers that carry their session (the client keeps no cookie, so
    that each request says whose it is)."""
    response = client.post("/login", json={"name": name, "password": PASSWORD})
    assert response.status_code == 200, response.text
    cookie = response.cookies.get("truthbase_session")
    assert cookie
    client.cookies.clear()
    return {"Cookie": f"truthbase_session={cookie}"}
