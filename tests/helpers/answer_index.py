"""The seed index on one backend for the tests of stored answers (`verify`, `export`): the CLI's
arguments and environment and the server's settings that reach it, and a way to overwrite a
stored page's text."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
from click.testing import CliRunner

from tests.helpers.indexes import copy_db
from tests.helpers.pg_server import copy_into_postgres, shared_server
from truthbase.cli import cli
from truthbase.config import Settings
from truthbase.records import StoredAnswer
from truthbase.store import open_store

__all__ = ["Index", "run"]


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


class Index:
    """The seed index on one backend, as the CLI (arguments, environment) and the server
    (settings) reach it, with a way to overwrite a stored page's text."""

    def __init__(self, kind: str, seed_db: Path, folder: Path) -> None:
        self.db = copy_db(seed_db, folder / "answers.sqlite")
        self.url: str | None = None
        if kind == "postgres":
            self.url = copy_into_postgres(self.db)
        self.args = ["--db", str(self.db)] if self.url is None else []
        self.env = {} if self.url is None else {"TRUTHBASE_DATABASE_URL": self.url}
        self.settings = Settings(db=self.db, database_url=self.url)

    def answers(self) -> list[StoredAnswer]:
        store = open_store(self.settings)
        try:
            return store.answers()
        finally:
            store.close()

    def corrupt(self, doc_id: str, unit: int, folder: Path) -> Index:
        """A copy (SQLite) or this index (PostgreSQL) with the page's text overwritten."""
        if self.url is None:
            corrupted = copy_db(self.db, folder / "corrupted.sqlite")
            con = sqlite3.connect(corrupted)
            (text,) = con.execute(
                "SELECT text FROM units WHERE doc_id = ? AND idx = ?", (doc_id, unit)
            ).fetchone()
            con.execute(
                "UPDATE units SET text = ? WHERE doc_id = ? AND idx = ?",
                ("x" * len(text), doc_id, unit),
            )
            con.commit()
            con.close()
            self.db = corrupted
            self.args = ["--db", str(corrupted)]
        else:
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(
                    "UPDATE truthbase.units SET text = repeat('x', length(text)) "
                    "WHERE doc_id = %s AND idx = %s",
                    (doc_id, unit),
                )
        return self

    def drop(self) -> None:
        if self.url is not None:
            shared_server().drop_database(self.url)
