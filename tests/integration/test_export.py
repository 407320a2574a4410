"""Exports that can be re-verified (issue 26 item 4), on both backends: an answer exported as an
HTML evidence report (by the CLI and through the HTTP API) re-checks OK with `truthbase verify
--report`, and once a cited page changes or a cited document is deleted, the re-check exits 1
naming the citation; a file that is not a report exits 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers.answer_index import Index, run
from tests.helpers.pg_server import BACKENDS
from truthbase.export import NOT_IN_INDEX, read_evidence
from truthbase.server import create_app
from truthbase.store import open_store

pytestmark = pytest.mark.slow


def _ask(index: Index, question: str) -> dict[str, object]:
    code, out = run(*index.args, "ask", question, "--json", "--mode", "extractive", env=index.env)
    assert code == 0, out
    answer = json.loads(out)
    assert answer["id"] is not None and answer["citations"], answer
    return dict(answer)


def _export(index: Index, answer_id: object, fmt: str, out: Path) -> str:
    args = ["export", "--answer", str(answer_id), "--format", fmt, "--out", str(out)]
    code, printed = run(*index.args, *args, env=index.env)
    assert code == 0, printed
    return out.read_text("utf-8")


def _verify_report(index: Index, report: Path, *extra: str) -> tuple[int, str]:
    return run(*index.args, "verify", "--report", str(report), *extra, env=index.env)


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_export_verifies_until_its_evidence_changes(
    seed_db: Path, tmp_path: Path, kind: str
) -> None:
    index = Index(kind, seed_db, tmp_path)
    try:
        _export_then_verify(index, tmp_path)
    finally:
        index.drop()


def _export_then_verify(index: Index, tmp_path: Path) -> None:
    first = _ask(index, "How does the AI RMF define risk?")
    second = _ask(index, "What is a CSF Community Profile?")
    cited = first["citations"][0]  # type: ignore[index]

    # the CLI: an HTML report with the cited region rendered, and the Markdown
    html = _export(index, first["id"], "html", tmp_path / "first.html")
    assert "<script" not in html.lower()
    assert html.count('src="data:image/png;base64,') == len(first["citations"])  # type: ignore[arg-type]
    assert cited["doc_id"] in html
    evidence = read_evidence(html)
    assert evidence["answers"][0]["id"] == first["id"]
    md = _export(index, first["id"], "md", tmp_path / "first.md")
    assert "[^1]" in md and f"sha256 `{cited['doc_id']}`" in md
    assert f"start={cited['start']}&end={cited['end']}" in md  # the link opens the highlight

    # the HTTP API: the same exports, as downloads
    with TestClient(create_app(index.settings)) as client:
        got = client.get(f"/api/answers/{second['id']}/export", params={"format": "html"})
        assert got.status_code == 200, got.text
        assert got.headers["content-type"].startswith("text/html")
        assert got.headers["content-disposition"].startswith("attachment;")
        assert 'src="data:image/png;base64,' in got.text
        (tmp_path / "second.html").write_text(got.text, "utf-8")
        got_md = client.get(f"/api/answers/{second['id']}/export", params={"format": "md"})
        assert got_md.status_code == 200 and got_md.headers["content-type"].startswith(
            "text/markdown"
        )
        assert "[^" in got_md.text and "http://testserver/view?doc=" in got_md.text
        assert client.get("/api/answers/999999/export").status_code == 404
        assert client.get(f"/api/answers/{second['id']}/export?format=pdf").status_code == 422

    for name in ("first.html", "second.html", "first.md"):  # Markdown carries the evidence too
        code, out = _verify_report(index, tmp_path / name)
        assert code == 0, out
        assert "OK: 1 answers" in out

    # a changed page: the first report no longer holds
    index.corrupt(str(cited["doc_id"]), int(cited["unit"]), tmp_path)
    code, out = _verify_report(index, tmp_path / "first.html")
    assert code == 1, out
    assert (
        f"NO LONGER HOLDS answer {first['id']} citation [{cited['n']}] "
        f"doc {str(cited['doc_id'])[:12]} page {cited['page']}: "
        "the quote is not in the page text at its span"
    ) in out

    # a deleted document: the second report no longer holds
    gone = second["citations"][0]["doc_id"]  # type: ignore[index]
    store = open_store(index.settings.model_copy(update={"db": index.db}))
    try:
        assert store.delete_document(gone) is not None
    finally:
        store.close()
    code, out = _verify_report(index, tmp_path / "second.html", "--json")
    assert code == 1, out
    checked = json.loads(out)
    assert not checked["ok"]
    assert {(p["answer_id"], p["doc_id"], p["why"]) for p in checked["problems"]} >= {
        (second["id"], gone, NOT_IN_INDEX)
    }

    code, out = _verify_report(index, tmp_path / "first.md")  # and Markdown says the same
    assert code == 1 and f"NO LONGER HOLDS answer {first['id']}" in out, out

    # a file that is not a report
    (tmp_path / "notes.md").write_text("# Notes\n\nNo evidence here.\n", "utf-8")
    code, out = _verify_report(index, tmp_path / "notes.md")
    assert code == 2, out
    assert "no TruthBase evidence" in out


def test_an_answer_is_exported_to_those_who_see_what_it_cites(
    seed_db: Path, tmp_path: Path
) -> None:
    from truthbase import accounts
    from truthbase.config import AuthSettings, ServerSettings, Settings
    from truthbase.store import SQLiteStore

    index = Index("sqlite", seed_db, tmp_path)
    answer = _ask(index, "How does the AI RMF define risk?")
    cited = {c["doc_id"] for c in answer["citations"]}  # type: ignore[attr-defined]
    store = SQLiteStore(index.db)
    try:
        ann = accounts.add_user(store, "ann", "correct horse battery")
        bob = accounts.add_user(store, "bob", "correct horse battery")
        tokens = {name: accounts.create_token(store, name).secret for name in ("ann", "bob")}
    finally:
        store.close()
    with sqlite3.connect(index.db) as conn:  # ann asked it (the chat door records its asker)
        conn.execute("UPDATE answers SET asked_by = ? WHERE id = ?", (ann.id, answer["id"]))
    settings = Settings(
        db=index.db,
        auth=AuthSettings(secret_key_file=tmp_path / "secret.key"),
        server=ServerSettings(allowed_hosts=["testserver"]),
    )
    route = f"/api/answers/{answer['id']}/export?format=md"

    def shown_to() -> dict[str, Any]:
        with TestClient(create_app(settings)) as client:
            assert client.get(route).status_code == 401
            return {
                name: client.get(route, headers={"Authorization": f"Bearer {secret}"})
                for name, secret in tokens.items()
            }

    shown = shown_to()  # the cited documents are shared: bob sees them, but did not ask
    assert shown["ann"].status_code == 200, shown["ann"].text
    assert shown["bob"].status_code == 404  # as a missing answer: nothing of it is told
    assert shown["bob"].json()["detail"] == f"no answer {answer['id']}"
    store = SQLiteStore(index.db)
    try:
        for doc_id in cited:
            assert store.set_document_access(doc_id, bob.id, "private")
    finally:
        store.close()
    shown = shown_to()  # the asker no longer sees what the answer cites
    assert shown["ann"].status_code == 404
