"""Stored answers and `truthbase verify`: answers from `ask` and the chat endpoint are kept, and
the audit fails, naming the citation, once a stored page no longer holds a verified quote; on
both backends (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.indexes import copy_db
from tests.helpers.pg_server import BACKENDS, copy_into_postgres, shared_server
from truthbase.cli import cli
from truthbase.config import Settings
from truthbase.records import StoredAnswer
from truthbase.server import create_app
from truthbase.store import open_store

pytestmark = pytest.mark.slow


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


@pytest.mark.parametrize("kind", BACKENDS)
def test_verify_passes_then_fails_on_a_corrupted_page(
    seed_db: Path, tmp_path: Path, kind: str
) -> None:
    index = Index(kind, seed_db, tmp_path)
    try:
        _verify_passes_then_fails(index, tmp_path)
    finally:
        index.drop()


def _verify_passes_then_fails(index: Index, tmp_path: Path) -> None:
    before = len(index.answers())
    questions = ["How does the AI RMF define risk?", "What is a CSF Community Profile?"]
    for question in questions:
        code, out = run(
            *index.args, "ask", question, "--json", "--mode", "extractive", env=index.env
        )
        assert code == 0, out
        assert json.loads(out)["id"] is not None
    with TestClient(create_app(index.settings)) as client:
        body = client.post("/api/chat", json={"question": "Which function did CSF 2.0 add?"}).text
    assert "event: done" in body
    stored = index.answers()[before:]
    assert [a.question for a in stored] == [*questions, "Which function did CSF 2.0 add?"]
    verified = [(a.id, c) for a in stored for c in a.answer["citations"] if c["verified"] is True]
    assert verified, "the extractive answers cite verified spans"

    code, out = run(*index.args, "verify", env=index.env)
    assert code == 0, out
    assert f"{len(stored) + before} answers" in out and "OK" in out

    answer_id, citation = verified[0]
    index.corrupt(citation["doc_id"], citation["unit"], tmp_path)
    code, out = run(*index.args, "verify", env=index.env)
    assert code == 1, out
    line = (
        f"FAIL answer {answer_id} citation [{citation['n']}] doc {citation['doc_id'][:12]} "
        f"page {citation['page']}: the quote is not in the page text at its span"
    )
    assert line in out
    code, out = run(*index.args, "verify", "--json", env=index.env)
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    assert {"answer_id": answer_id, "n": citation["n"], "doc_id": citation["doc_id"]}.items() <= (
        report["failures"][0].items()
    )


def test_ask_mode_llm_without_an_llm_is_a_clear_error(seed_db: Path, tmp_path: Path) -> None:
    db = copy_db(seed_db, tmp_path / "t.sqlite")
    result = CliRunner().invoke(
        cli, ["--db", str(db), "ask", "What is risk?", "--mode", "llm"], env={}
    )
    assert result.exit_code == 2
    assert "TRUTHBASE_LLM__BASE_URL" in result.output
