"""Agent mode on a long book: Pride and Prejudice (golden_db's EPUB), the extractive agent.

An overview question is answered from the segment summaries (the full-summaries tool), a detail
question, written for this test from the book's text, cites a verified span in the right
chapter (spine item). The same answers through `truthbase ask --mode agent` and `POST /api/chat`
with ``mode: agent``. Every verified citation is re-checked here against the stored unit text
with the one matcher. The book tools write the segment index into the store, so the module works
on a copy of golden_db.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.citations import recheck
from tests.helpers.corpus import PRIDE_TITLE as BOOK
from tests.helpers.indexes import copy_db
from truthbase.answer import Answer, ask_agent
from truthbase.answer.agent_extractive import question_kind
from truthbase.cli import cli
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.modes import agent_for
from truthbase.segments.tools import FULL_SUMMARIES, RELATED_SEGMENTS
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

# Chapter 8: Miss Bingley on Pemberley: "There is not a finer county in England than
# Derbyshire." Chapters 7 to 10 are the second spine item of this edition.
DETAIL = "In which county is Pemberley?"
DETAIL_HREF = "@public@vhost@g@gutenberg@html@files@1342@1342-h@1342-h-1.htm.html"
DETAIL_WORD = "Derbyshire"


@pytest.fixture(scope="module")
def book_db(golden_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_db(golden_db, tmp_path_factory.mktemp("agent") / "book.sqlite")


@pytest.fixture(scope="module")
def store(book_db: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(book_db)
    yield s
    s.close()


@pytest.fixture(scope="module")
def book_id(store: SQLiteStore) -> str:
    (doc_id,) = [d.id for d in store.list_documents() if d.title == BOOK]
    return doc_id


def settings(db: Path) -> Settings:
    return Settings(db=db)  # no LLM configured: the extractive agent answers


def ask(store: SQLiteStore, embedder: Embedder, book_db: Path, doc_id: str, q: str) -> Answer:
    agent = agent_for(settings(book_db), store, embedder, doc_id=doc_id)
    assert agent.model is None
    answer = ask_agent(store, embedder, q, agent)
    recheck(store, answer)
    return answer


def test_an_overview_question_is_answered_from_the_summaries(
    store: SQLiteStore, embedder: Embedder, book_db: Path, book_id: str
) -> None:
    question = "What is this book about?"
    assert question_kind(question) == "overview"
    answer = ask(store, embedder, book_db, book_id, question)
    assert answer.answerer == "agent-extractive"
    assert [t["name"] for t in answer.info["tools"]] == [FULL_SUMMARIES]
    assert not answer.refused
    assert len(answer.citations) >= 3
    assert all(c.verified and c.via == "tag" and c.doc_id == book_id for c in answer.citations)
    # Each cited passage is one a summary tagged (a source of the full-summaries tool), and
    # the answer spans the book: no two citations from the same spine item.
    spans = {(s.unit, s.start, s.end) for s in answer.sources}
    assert all((c.unit, c.start, c.end) in spans for c in answer.citations)
    assert len({c.unit for c in answer.citations}) == len(answer.citations)
    assert answer.timings["total"] < 120


def test_a_detail_question_cites_the_right_chapter(
    store: SQLiteStore, embedder: Embedder, book_db: Path, book_id: str
) -> None:
    assert question_kind(DETAIL) == "detail"
    answer = ask(store, embedder, book_db, book_id, DETAIL)
    assert answer.answerer == "agent-extractive"
    assert [t["name"] for t in answer.info["tools"]] == [RELATED_SEGMENTS]
    assert not answer.refused
    right = [c for c in answer.citations if c.verified and DETAIL_WORD in c.quote]
    assert right, answer.text
    for c in right:
        unit = store.unit(c.doc_id, c.unit)
        assert unit is not None and unit.href == DETAIL_HREF


def test_a_question_the_book_does_not_answer_is_refused(
    store: SQLiteStore, embedder: Embedder, book_db: Path, book_id: str
) -> None:
    answer = ask(store, embedder, book_db, book_id, "What port does Kubernetes 1.29 use for etcd?")
    assert answer.refused and answer.citations == []


def test_ask_mode_agent_on_the_command_line(book_db: Path, book_id: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["--db", str(book_db), "ask", "--mode", "agent", "--doc", book_id[:12], "--json", DETAIL],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["answerer"] == "agent-extractive"
    assert answer["info"]["mode"] == "agent"
    assert answer["id"] is not None  # stored for `truthbase verify`
    verify = CliRunner().invoke(cli, ["--db", str(book_db), "verify"], catch_exceptions=False)
    assert verify.exit_code == 0, verify.output


def test_chat_in_agent_mode(book_db: Path, book_id: str) -> None:
    with TestClient(create_app(settings(book_db))) as client:
        body = {"question": DETAIL, "mode": "agent", "doc": book_id}
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            text = response.read().decode()
        assert client.post("/api/chat", json={"question": "q", "mode": "oracle"}).status_code == 422
    events = [
        (dict(line.split(": ", 1) for line in block.splitlines()))
        for block in text.strip().split("\n\n")
    ]
    kinds = [e["event"] for e in events]
    assert kinds == ["sources", "token", "citations", "done"], kinds
    answer = json.loads(events[-1]["data"])["answer"]
    assert answer["answerer"] == "agent-extractive"
    assert all(s["doc_id"] == book_id for s in answer["sources"])
