"""Stored answers and `truthbase verify`: answers from `ask` and the chat endpoint are kept, and
the audit fails, naming the citation, once a stored page no longer holds a verified quote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from truthbase.cli import cli
from truthbase.config import Settings
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow


def copy_db(source: Path, target: Path) -> Path:
    """A consistent copy of an SQLite index (the backup API, safe beside open connections)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_verify_passes_then_fails_on_a_corrupted_page(seed_db: Path, tmp_path: Path) -> None:
    db = copy_db(seed_db, tmp_path / "answers.sqlite")
    before = len(SQLiteStore(db).answers())
    questions = ["How does the AI RMF define risk?", "What is a CSF Community Profile?"]
    for question in questions:
        code, out = run("--db", str(db), "ask", question, "--json", "--mode", "extractive")
        assert code == 0, out
        assert json.loads(out)["id"] is not None
    with TestClient(create_app(Settings(db=db))) as client:
        body = client.post("/api/chat", json={"question": "Which function did CSF 2.0 add?"}).text
    assert "event: done" in body
    store = SQLiteStore(db)
    try:
        stored = store.answers()[before:]
    finally:
        store.close()
    assert [a.question for a in stored] == [*questions, "Which function did CSF 2.0 add?"]
    verified = [(a.id, c) for a in stored for c in a.answer["citations"] if c["verified"] is True]
    assert verified, "the extractive answers cite verified spans"

    code, out = run("--db", str(db), "verify")
    assert code == 0, out
    assert f"{len(stored) + before} answers" in out and "OK" in out

    answer_id, citation = verified[0]
    corrupted = copy_db(db, tmp_path / "corrupted.sqlite")
    con = sqlite3.connect(corrupted)
    (text,) = con.execute(
        "SELECT text FROM units WHERE doc_id = ? AND idx = ?",
        (citation["doc_id"], citation["unit"]),
    ).fetchone()
    con.execute(
        "UPDATE units SET text = ? WHERE doc_id = ? AND idx = ?",
        ("x" * len(text), citation["doc_id"], citation["unit"]),
    )
    con.commit()
    con.close()
    code, out = run("--db", str(corrupted), "verify")
    assert code == 1, out
    line = (
        f"FAIL answer {answer_id} citation [{citation['n']}] doc {citation['doc_id'][:12]} "
        f"page {citation['page']}: the quote is not in the page text at its span"
    )
    assert line in out
    code, out = run("--db", str(corrupted), "verify", "--json")
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
