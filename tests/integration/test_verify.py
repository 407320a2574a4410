"""Stored answers and `truthbase verify`: answers from `ask` and the chat endpoint are kept, and
the audit fails, naming the citation, once a stored page no longer holds a verified quote; on
both backends (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.answer_index import Index, run
from tests.helpers.indexes import copy_db
from tests.helpers.pg_server import BACKENDS
from truthbase.cli import cli
from truthbase.server import create_app

pytestmark = pytest.mark.slow


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
