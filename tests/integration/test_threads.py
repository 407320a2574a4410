"""Saved threads at the HTTP API over the seed index, on both backends (a real SQLite file and a
real PostgreSQL, tests/helpers/pg_server.py): a chat without a thread starts one and ``done``
names it; a follow-up sent with ``thread`` is resolved against the stored turns ("searched for")
and appended; the list is the user's own, newest first, searchable by words of questions and
answers; rename and delete; another user (an admin too) gets 404 for the thread and an admin
gets counts, never contents; opening a thread checks each citation again: current, changed (the
page's stored text differs, as after a re-ingest with another extractor), hidden (made private
to someone else) and deleted, each with its reason, never a highlight on other text. The thread
log itself on both backends, and the MCP ask tool's thread."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers.indexes import use_copy
from tests.helpers.pg_server import BACKENDS
from tests.helpers.sites import PASSWORD, Site, login, open_site
from truthbase import accounts
from truthbase.app import Service
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.export import read_evidence
from truthbase.mcp.tools import call_tool
from truthbase.people import Viewer
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.slow]

FIRST = "How does RAPTOR segment the retrieval corpus before building its tree?"
FOLLOW_UP = "What are they embedded with?"
OTHER = "Which CSF 2.0 subcategory covers risk appetite and risk tolerance statements?"


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, seed_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp(f"threads-{request.param}")
    users = (("ann", False), ("bob", False), ("root", True))
    with open_site(request.param, seed_db, folder, users) as opened:
        yield opened


def _done(client: TestClient, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    response = client.post("/api/chat", json={"mode": "extractive", **body}, headers=headers)
    assert response.status_code == 200, response.text
    events = []
    for block in response.text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    kind, data = events[-1]
    assert kind == "done", events[-1]
    return data


@dataclass
class AnnsThread:
    id: str
    first: dict[str, Any]
    follow_up: dict[str, Any]
    ann: dict[str, str]


@pytest.fixture(scope="module")
def thread(site: Site) -> AnnsThread:
    ann = login(site.client, "ann")
    first = _done(site.client, {"question": FIRST}, ann)
    thread_id = first["thread"]
    assert isinstance(thread_id, str) and len(thread_id) == 32
    assert first["answer"]["citations"], first["answer"]["text"]
    follow_up = _done(site.client, {"question": FOLLOW_UP, "thread": thread_id}, ann)
    assert follow_up["thread"] == thread_id
    return AnnsThread(thread_id, first, follow_up, ann)


def test_a_follow_up_in_a_thread_is_resolved_against_its_stored_turns(
    site: Site, thread: AnnsThread
) -> None:
    searched = thread.follow_up["searched_for"]
    assert searched.startswith(FOLLOW_UP) and "raptor" in searched.casefold(), searched
    assert thread.follow_up["resolution"]["kind"] == "resolved"
    raptor = thread.first["answer"]["citations"][0]["doc_id"]
    assert thread.follow_up["resolution"]["prior_documents"] == [raptor]
    # A thread and a history together are refused: one of them is the thread's turns.
    both = site.client.post(
        "/api/chat",
        json={"question": FOLLOW_UP, "thread": thread.id, "history": [{"question": FIRST}]},
        headers=thread.ann,
    )
    assert both.status_code == 400, both.text


def test_opening_the_thread_gives_every_answer_and_citation_as_shown(
    site: Site, thread: AnnsThread
) -> None:
    opened = site.client.get(f"/api/threads/{thread.id}", headers=thread.ann)
    assert opened.status_code == 200, opened.text
    data = opened.json()
    assert data["title"] == FIRST and data["turns"] and len(data["turns"]) == 2
    first, second = data["turns"]
    assert (first["question"], second["question"]) == (FIRST, FOLLOW_UP)
    assert first["searched_for"] is None
    assert second["searched_for"] == thread.follow_up["searched_for"]
    for turn, done in ((first, thread.first), (second, thread.follow_up)):
        shown = done["answer"]
        assert turn["answer"]["text"] == shown["text"]
        assert turn["answer_id"] == shown["id"]
        assert len(turn["answer"]["citations"]) == len(shown["citations"])
        for stored, was in zip(turn["answer"]["citations"], shown["citations"], strict=True):
            assert {k: stored[k] for k in was} == was  # spans, rects, states as shown
            expected = "current" if was["state"] in ("supported", "quote_only") else "unchecked"
            assert stored["recheck"]["state"] == expected, stored["recheck"]


def test_the_list_is_newest_first_and_searchable_by_questions_and_answers(
    site: Site, thread: AnnsThread
) -> None:
    other = _done(site.client, {"question": OTHER}, thread.ann)
    listed = site.client.get("/api/threads", headers=thread.ann).json()["threads"]
    assert [t["id"] for t in listed[:2]] == [other["thread"], thread.id]
    assert listed[1]["turns"] == 2

    def found(q: str) -> list[str]:
        response = site.client.get("/api/threads", params={"q": q}, headers=thread.ann)
        assert response.status_code == 200, response.text
        return [t["id"] for t in response.json()["threads"]]

    assert found("raptor embedded") == [thread.id]  # words of both questions
    assert found("APPETITE") == [other["thread"]]  # case-folded
    # A word only the answer has (not in either question) finds the thread too.
    answer_words = {w.strip(".,;:()[]").casefold() for w in thread.first["answer"]["text"].split()}
    question_words = set(f"{FIRST} {FOLLOW_UP} {OTHER}".casefold().split())
    only_answer = sorted(w for w in answer_words - question_words if len(w) > 6 and w.isalpha())
    assert only_answer, thread.first["answer"]["text"]
    assert thread.id in found(only_answer[0])
    assert found("zebras") == []
    assert found("%_") == []  # no wildcard: punctuation is no word
    assert found("embedde") == [thread.id]  # as one types: the start of "embedded"
    assert found("mbedded") == []  # a word's start, not any piece of it
    assert found("raptor?") == [thread.id]  # punctuation aside


def test_threads_are_their_owners_alone_and_an_admin_sees_counts(
    site: Site, thread: AnnsThread
) -> None:
    bob, root = login(site.client, "bob"), login(site.client, "root")
    assert site.client.get("/api/threads", headers=bob).json()["threads"] == []
    for headers in (bob, root):
        url = f"/api/threads/{thread.id}"
        assert site.client.get(url, headers=headers).status_code == 404
        assert site.client.patch(url, json={"title": "x"}, headers=headers).status_code == 404
        assert site.client.delete(url, headers=headers).status_code == 404
        hijack = site.client.post(
            "/api/chat", json={"question": FOLLOW_UP, "thread": thread.id}, headers=headers
        )
        assert hijack.status_code == 404, hijack.text
    assert site.client.get("/api/admin/threads", headers=bob).status_code == 403
    counts = site.client.get("/api/admin/threads", headers=root)
    assert counts.status_code == 200, counts.text
    by_user = {c["user"]: c for c in counts.json()["users"]}
    assert by_user["ann"]["threads"] >= 1 and by_user["ann"]["turns"] >= 2
    assert "RAPTOR" not in counts.text and FIRST not in counts.text
    # the thread is unchanged by the others' attempts
    assert site.client.get(f"/api/threads/{thread.id}", headers=thread.ann).json()["turns"]


def test_a_thread_exports_every_answer_in_order_and_only_to_its_owner(
    site: Site, thread: AnnsThread
) -> None:
    ids = [thread.first["answer"]["id"], thread.follow_up["answer"]["id"]]
    url = f"/api/threads/{thread.id}/export"
    markdown = site.client.get(url, params={"format": "md"}, headers=thread.ann)
    assert markdown.status_code == 200, markdown.text
    assert "attachment" in markdown.headers["content-disposition"]
    for answer_id in ids:  # footnotes kept apart per answer
        assert f"[^a{answer_id}-1]" in markdown.text, markdown.text[:2000]
    report = site.client.get(url, headers=thread.ann)  # html by default
    assert report.status_code == 200, report.text[:500]
    assert [a["id"] for a in read_evidence(report.text)["answers"]] == ids
    bob = login(site.client, "bob")
    assert site.client.get(url, headers=bob).status_code == 404
    assert site.client.get(f"/api/answers/{ids[0]}/export", headers=bob).status_code == 404


def test_rename_and_delete(site: Site, thread: AnnsThread) -> None:
    extra = _done(site.client, {"question": OTHER}, thread.ann)["thread"]
    renamed = site.client.patch(
        f"/api/threads/{extra}", json={"title": "  Risk   appetite "}, headers=thread.ann
    )
    assert renamed.status_code == 200 and renamed.json()["title"] == "Risk appetite"
    listed = site.client.get("/api/threads", headers=thread.ann).json()["threads"]
    assert {t["id"]: t["title"] for t in listed}[extra] == "Risk appetite"
    assert site.client.delete(f"/api/threads/{extra}", headers=thread.ann).status_code == 204
    assert site.client.get(f"/api/threads/{extra}", headers=thread.ann).status_code == 404
    listed = site.client.get("/api/threads", headers=thread.ann).json()["threads"]
    assert extra not in {t["id"] for t in listed}


def _first_current(data: dict[str, Any]) -> dict[str, Any]:
    for turn in data["turns"]:
        for citation in turn["answer"]["citations"]:
            if citation["recheck"]["state"] == "current":
                return dict(citation)
    raise AssertionError("no current citation")


def test_reopened_citations_say_changed_hidden_or_deleted_with_the_reason(
    site: Site, thread: AnnsThread
) -> None:
    """Last in the module: it changes, hides and deletes seed documents."""
    # changed: the cited page's stored text differs at the span
    raptor_thread = _done(site.client, {"question": FIRST}, thread.ann)["thread"]
    opened = site.client.get(f"/api/threads/{raptor_thread}", headers=thread.ann).json()
    cited = _first_current(opened)
    site.change_unit_text(cited["doc_id"], cited["unit"], cited["start"], cited["end"])
    again = site.client.get(f"/api/threads/{raptor_thread}", headers=thread.ann).json()
    same = [
        c
        for t in again["turns"]
        for c in t["answer"]["citations"]
        if (c["doc_id"], c["unit"], c["start"]) == (cited["doc_id"], cited["unit"], cited["start"])
    ]
    assert same and all(c["recheck"]["state"] == "changed" for c in same), same
    assert "not in the page text" in same[0]["recheck"]["reason"]

    # hidden: the CSF document made private to bob; deleted: the document gone
    csf_thread = _done(site.client, {"question": OTHER}, thread.ann)
    csf = csf_thread["answer"]["citations"][0]["doc_id"]
    store = site.store()
    try:
        bob = store.user("bob")
        assert bob is not None
        assert store.set_document_access(csf, bob.id, "private")
        hidden = site.client.get(f"/api/threads/{csf_thread['thread']}", headers=thread.ann)
        citations = [c for c in hidden.json()["turns"][0]["answer"]["citations"]]
        mine = [c for c in citations if c["doc_id"] == csf]
        assert mine and all(c["recheck"]["state"] == "hidden" for c in mine)
        assert all(c["quote"] == "" and c["rects"] == [] for c in mine)  # not shown again
        assert "no longer visible" in mine[0]["recheck"]["reason"]
        assert store.delete_document(csf) is not None
    finally:
        store.close()
    deleted = site.client.get(f"/api/threads/{csf_thread['thread']}", headers=thread.ann).json()
    gone = [c for c in deleted["turns"][0]["answer"]["citations"] if c["doc_id"] == csf]
    assert gone and all(
        c["recheck"] == {"state": "deleted", "reason": "document deleted"} for c in gone
    )


# -- the store alone, on both backends (no index needed) --------------------------------------


def test_the_thread_log_keeps_owners_apart_and_goes_with_a_removed_user(backend: Any) -> None:
    store = backend.open()
    try:
        ann = accounts.add_user(store, "ann", PASSWORD)
        accounts.add_user(store, "bob", PASSWORD)
        mine = store.add_thread("a" * 32, ann.id, "Ann's")
        local = store.add_thread("b" * 32, None, "Local")
        answer = {"text": "Tiles 50%_off [1]", "refused": False, "citations": []}
        assert store.add_turn(mine.id, "first?", answer, answer_id=None) is not None
        second = store.add_turn(
            mine.id, "then?", {"text": "x"}, answer_id=7, resolution={"searched_for": "then x"}
        )
        assert second is not None and second.idx == 1 and second.searched_for == "then x"
        assert store.add_turn("c" * 32, "q", answer) is None  # no such thread
        assert [t.id for t in store.threads(ann.id)] == [mine.id]
        assert [t.id for t in store.threads(None)] == [local.id]
        assert store.threads(store.user("bob").id) == []
        assert [t.turns for t in store.threads(ann.id)] == [2]
        assert [t.id for t in store.threads(ann.id, ["50%_off"])] == [mine.id]
        assert store.threads(ann.id, ["5%_x"]) == []  # no wildcard: no word begins with "_x"
        assert store.threads(ann.id, ["first?", "nowhere"]) == []  # every word must match
        # the starts of words, case-folded after NFKC, on both backends alike (SQLite's lower()
        # and LIKE fold ASCII only): "iles" begins no word of "Tiles", "STRASSE" is "Straße"
        assert store.threads(ann.id, ["iles"]) == []
        assert [t.id for t in store.threads(ann.id, ["TILE"])] == [mine.id]
        assert [t.id for t in store.threads(ann.id, ["TILES", "then"])] == [mine.id]
        assert store.add_turn(local.id, "Über die Straße?", {"text": "ﬁne"}) is not None
        assert [t.id for t in store.threads(None, ["über", "STRASSE", "fine"])] == [local.id]
        assert store.threads(None, ["uber"]) == []
        turns = store.thread_turns(mine.id)
        assert [(t.idx, t.question, t.answer_id) for t in turns] == [
            (0, "first?", None),
            (1, "then?", 7),
        ]
        assert turns[0].answer == answer
        counts = {c.owner: (c.threads, c.turns) for c in store.thread_counts()}
        assert counts == {ann.id: (1, 2), None: (1, 1)}
        assert (
            store.rename_thread(local.id, "Renamed") and store.thread(local.id).title == "Renamed"
        )
        assert store.remove_user("ann")
        assert store.thread(mine.id) is None and store.thread_turns(mine.id) == []
        assert store.delete_thread(local.id) and not store.delete_thread(local.id)
    finally:
        store.close()


def test_the_mcp_ask_tool_starts_and_follows_a_saved_thread(
    seed_db: Path, tmp_path: Path, embedder: Embedder
) -> None:
    db = use_copy(seed_db, tmp_path / "seed.sqlite")
    store = SQLiteStore(db)
    try:
        service = Service(store, Settings(db=db), lambda: embedder)
        first = call_tool(
            service, "ask", {"question": FIRST, "mode": "extractive", "new_thread": True}
        )
        assert not first.is_error and first.structured_content is not None, first.content
        thread_id = first.structured_content["thread"]
        follow_up = call_tool(
            service, "ask", {"question": FOLLOW_UP, "mode": "extractive", "thread": thread_id}
        )
        assert not follow_up.is_error and follow_up.structured_content is not None
        assert follow_up.structured_content["thread"] == thread_id
        assert "raptor" in follow_up.structured_content["searched_for"].casefold()
        opened = service.thread(thread_id)
        assert [t.question for t in opened.turns] == [FIRST, FOLLOW_UP]
        plain = call_tool(service, "ask", {"question": OTHER, "mode": "extractive"})
        assert plain.structured_content is not None and "thread" not in plain.structured_content
        someone = service.for_viewer(Viewer(user="eve", user_id="e" * 32))
        taken = call_tool(someone, "ask", {"question": FOLLOW_UP, "thread": thread_id})
        assert taken.is_error and "NotFound" in str(taken.content)
    finally:
        store.close()
