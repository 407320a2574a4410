"""Feedback on answers, at the HTTP API and the CLI, on both backends (a real SQLite file and a
real PostgreSQL, tests/helpers/pg_server.py): a user reports on the answers they were shown
(thumbs up or down; "wrong passage" or "passage missing" on a citation), a later report of the
same group replaces the earlier, another user's answer is not found, the admin lists everyone's
reports, a removed user's reports go with them, `feedback export --golden` writes a draft that
the golden loader reads back, its evidence the cited spans the users confirmed, and an index from
before feedback (SQLite 15, PostgreSQL 14) opens with it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.pg_server import Backend
from tests.helpers.sites import login
from truthbase import accounts
from truthbase.app import feedback
from truthbase.cli import cli
from truthbase.config import AuthSettings, ServerSettings, Settings
from truthbase.embed import Embedder
from truthbase.errors import NotFound
from truthbase.eval.golden import load_golden
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.people import OPERATOR, Viewer
from truthbase.server import create_app
from truthbase.store import SQLiteStore, Store
from truthbase.store.postgres import PostgresStore

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

PASSWORD = "correct horse battery"
TRANSCRIPT = ROBUSTNESS / "pdfplumber-scotus-transcript-p1.pdf"
QUESTIONS = (
    "Who appeared on behalf of the Petitioner?",
    "Where and when did the oral argument take place?",
)


@dataclass
class Index:
    db: Path
    doc_id: str


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Index:
    folder = tmp_path_factory.mktemp("feedback")
    db = folder / "feedback.sqlite"
    store = SQLiteStore(db)
    try:
        accounts.add_user(store, "ann", PASSWORD)
        accounts.add_user(store, "bob", PASSWORD)
        accounts.add_user(store, "root", PASSWORD, admin=True)
        outcome = ingest_file(
            TRANSCRIPT, store, embedder, IngestOptions.from_settings(Settings(db=db))
        )
        assert outcome.status == "ingested" and outcome.doc_id is not None, outcome
    finally:
        store.close()
    return Index(db=db, doc_id=outcome.doc_id)


@pytest.fixture(params=("sqlite", "postgres"))
def settings(request: pytest.FixtureRequest, index: Index, tmp_path: Path) -> Iterator[Settings]:
    auth = AuthSettings(secret_key_file=tmp_path / "secret.key")
    server = ServerSettings(allowed_hosts=["testserver"])
    if request.param == "sqlite":
        db = tmp_path / "feedback.sqlite"
        db.write_bytes(index.db.read_bytes())  # each test its own answers and reports
        yield Settings(db=db, auth=auth, server=server)
        return
    from tests.helpers.pg_server import copy_into_postgres, shared_server

    url = copy_into_postgres(index.db)  # the document and the accounts, with their ids
    yield Settings(db=tmp_path / "unused.sqlite", database_url=url, auth=auth, server=server)
    shared_server().drop_database(url)


@pytest.fixture()
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def _open(settings: Settings) -> Store:
    if settings.database_url:
        return PostgresStore(settings.database_url)
    return SQLiteStore(settings.db)


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def _ask(client: TestClient, who: dict[str, str], question: str) -> dict[str, Any]:
    """The answer as its ``done`` event gives it (with its id in the answer log)."""
    body = {"question": question, "mode": "extractive"}
    response = client.post("/api/chat", json=body, headers=who)
    assert response.status_code == 200, response.text
    kind, data = _sse(response.text)[-1]
    assert kind == "done", data
    answer: dict[str, Any] = data["answer"]
    assert isinstance(answer["id"], int)
    return answer


def _report(
    client: TestClient, who: dict[str, str], answer_id: int, kind: str, **fields: Any
) -> Any:
    return client.post(
        f"/api/answers/{answer_id}/feedback", json={"kind": kind, **fields}, headers=who
    )


def test_reports_on_ones_own_answers_and_the_admin_sees_them(
    client: TestClient, settings: Settings
) -> None:
    ann, bob, root = (login(client, n) for n in ("ann", "bob", "root"))
    answer = _ask(client, ann, QUESTIONS[0])
    assert answer["citations"], answer  # the transcript names the petitioner's counsel
    answer_id = answer["id"]

    up = _report(client, ann, answer_id, "up", comment="  right  ")
    assert up.status_code == 200, up.text
    assert up.json()["user"] == "ann" and up.json()["comment"] == "right"
    # a change of mind replaces the vote; a citation report is its own group
    assert _report(client, ann, answer_id, "down").status_code == 200
    wrong = _report(client, ann, answer_id, "wrong_passage", citation=1, comment="not this one")
    assert wrong.status_code == 200, wrong.text
    mine = client.get("/api/feedback", headers=ann).json()["reports"]
    assert [(r["kind"], r["citation"]) for r in mine] == [("wrong_passage", 1), ("down", 0)]
    # what a reopened answer shows as given: one's own reports on that answer
    given = client.get(f"/api/answers/{answer_id}/feedback", headers=ann)
    assert given.status_code == 200, given.text
    assert [(r["kind"], r["citation"]) for r in given.json()["reports"]] == [
        ("wrong_passage", 1),
        ("down", 0),
    ]
    other = _ask(client, ann, QUESTIONS[1])
    assert client.get(f"/api/answers/{other['id']}/feedback", headers=ann).json() == {"reports": []}

    # another user's answer is not found, exactly as one that does not exist
    assert _report(client, bob, answer_id, "up").status_code == 404
    assert _report(client, bob, 10**9, "up").status_code == 404
    assert client.get(f"/api/answers/{answer_id}/feedback", headers=bob).status_code == 404
    assert client.get("/api/answers/1000000000/feedback", headers=ann).status_code == 404
    assert client.get("/api/feedback", headers=bob).json()["reports"] == []
    # reports that do not fit the answer
    missing = len(answer["citations"]) + 1
    assert _report(client, ann, answer_id, "wrong_passage", citation=missing).status_code == 400
    assert _report(client, ann, answer_id, "up", citation=1).status_code == 400
    assert _report(client, ann, answer_id, "love").status_code == 422
    assert _report(client, ann, answer_id, "up", comment="x" * 2001).status_code == 422
    # no login, no report
    assert client.post(f"/api/answers/{answer_id}/feedback", json={"kind": "up"}).status_code == 401

    # the admin lists everyone's, with the question, and may report on any answer
    everyone = client.get("/api/feedback", headers=root).json()["reports"]
    assert {(r["user"], r["kind"]) for r in everyone} == {("ann", "wrong_passage"), ("ann", "down")}
    assert {r["question"] for r in everyone} == {answer["question"]}
    assert client.get(f"/api/answers/{answer_id}/feedback", headers=root).json() == {
        "reports": []
    }  # an admin's buttons show the admin's own reports, not ann's
    assert _report(client, root, answer_id, "up").status_code == 200
    assert len(client.get("/api/feedback", headers=root).json()["reports"]) == 3
    root_given = client.get(f"/api/answers/{answer_id}/feedback", headers=root).json()
    assert [(r["user"], r["kind"]) for r in root_given["reports"]] == [("root", "up")]

    # a removed user's reports go with them; the admin's stay
    store = _open(settings)
    try:
        accounts.remove_user(store, "ann")
        assert [r.user for r in store.feedback(everyone=True)] == ["root"]
    finally:
        store.close()


def test_export_writes_a_draft_golden_set_from_the_reports(
    client: TestClient, settings: Settings, tmp_path: Path
) -> None:
    ann = login(client, "ann")
    confirmed = _ask(client, ann, QUESTIONS[0])
    missing = _ask(client, ann, QUESTIONS[1])
    assert confirmed["citations"] and missing["citations"]
    assert _report(client, ann, confirmed["id"], "up").status_code == 200
    assert _report(client, ann, missing["id"], "up").status_code == 200
    passage = _report(client, ann, missing["id"], "passage_missing", comment="the date line")
    assert passage.status_code == 200

    out = tmp_path / "draft.json"
    env = {"TRUTHBASE_DATABASE_URL": settings.database_url or ""}
    result = CliRunner().invoke(
        cli, ["--db", str(settings.db), "feedback", "export", "--golden", str(out)], env=env
    )
    assert result.exit_code == 0, result.output
    golden = load_golden(out)  # valid in the golden format
    assert [q.id for q in golden.questions] == [f"fb{confirmed['id']}"]
    (question,) = golden.questions
    assert question.question == confirmed["question"] and question.answerable
    assert "feedback" in question.tags and "review" not in question.tags
    cited = {(c["page"], c["quote"]) for c in confirmed["citations"]}
    assert {(e.page, e.quote) for e in question.evidence} == cited
    (name,) = golden.documents
    assert Path(golden.documents[name].path).resolve() == TRANSCRIPT.resolve()

    needs = json.loads((tmp_path / "draft.needs_evidence.json").read_text("utf-8"))
    assert [(q["id"], q["evidence"]) for q in needs] == [(f"fb{missing['id']}", [])]
    assert {"review", "passage-missing"} <= set(needs[0]["tags"])
    assert needs[0]["comments"] == ["the date line"]

    listed = CliRunner().invoke(
        cli, ["--db", str(settings.db), "feedback", "list", "--json"], env=env
    )
    assert listed.exit_code == 0, listed.output
    kinds = sorted(r["kind"] for r in json.loads(listed.output))
    assert kinds == ["passage_missing", "up", "up"]


def _to_version_before_feedback(backend: Backend) -> None:
    """Make the fresh index ``backend`` holds look as it did before feedback: no feedback
    table, answers without their asker, one answer kept, the version before (SQLite 15,
    PostgreSQL 14)."""
    answer = json.dumps({"text": "Yes [1].", "citations": [{"n": 1}]})
    if backend.kind == "sqlite":
        db = sqlite3.connect(backend.location)
        db.executescript(
            "DROP TABLE feedback; DROP TABLE answers; "
            "CREATE TABLE answers (id INTEGER PRIMARY KEY, question TEXT NOT NULL, "
            "answer TEXT NOT NULL, created_at TEXT NOT NULL);"
            "UPDATE meta SET value = '15' WHERE key = 'schema_version';"
        )
        db.execute("INSERT INTO answers VALUES (1, 'Why?', ?, '2026-01-01T00:00:00')", (answer,))
        db.commit()
        db.close()
        return
    with psycopg.connect(backend.location, autocommit=True) as conn:
        conn.execute("DROP TABLE truthbase.feedback")
        conn.execute("ALTER TABLE truthbase.answers DROP COLUMN asked_by")
        conn.execute("UPDATE truthbase.meta SET value = '14' WHERE key = 'schema_version'")
        conn.execute(
            "INSERT INTO truthbase.answers(question, answer, created_at) "
            "VALUES ('Why?', %s, '2026-01-01T00:00:00')",
            (answer,),
        )


def test_an_index_from_before_feedback_opens_with_it(backend: Backend) -> None:
    backend.open().close()
    _to_version_before_feedback(backend)
    store = backend.open()
    try:
        (old,) = store.answers()
        assert old.asked_by is None  # nobody known: only those who see everything report
        accounts.add_user(store, "ann", PASSWORD)
        ann = Viewer(user="ann", user_id=store.user("ann").id)
        with pytest.raises(NotFound):
            feedback.give_feedback(store, ann, old.id, "up")
        report = feedback.give_feedback(store, OPERATOR, old.id, "wrong_passage", citation=1)
        assert (report.kind, report.citation, report.user) == ("wrong_passage", 1, None)
        mine = store.add_answer("Who?", {"text": "Ann.", "citations": []}, ann.user_id)
        assert store.answer(mine).asked_by == ann.user_id
        feedback.give_feedback(store, ann, mine, "down", comment="no")
        assert [r.kind for r in feedback.list_feedback(store, ann)] == ["down"]
        assert len(feedback.list_feedback(store, OPERATOR)) == 2
    finally:
        store.close()
