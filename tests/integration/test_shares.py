"""Shared threads at the HTTP API over the seed index, on both backends (a real SQLite file and
a real PostgreSQL, tests/helpers/pg_server.py): ann shares a saved thread; bob, signed in, opens
its link read-only (every citation checked again; a question sent into the thread is 404 and
adds nothing); no session is 401; bob cannot share or revoke ann's thread; a cited document bob
may not see makes the link 404 with the very body of an unknown token (ann, who may, still opens
it); revoking makes it 404 for good and sharing again makes a new token; a cited document
deleted since makes it 404 for everyone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers.pg_server import BACKENDS
from tests.helpers.sites import Site, login, open_site

pytestmark = [pytest.mark.slow]

FIRST = "How does RAPTOR segment the retrieval corpus before building its tree?"
OTHER = "Which CSF 2.0 subcategory covers risk appetite and risk tolerance statements?"
UNKNOWN = "A" * 32


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, seed_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp(f"shares-{request.param}")
    with open_site(request.param, seed_db, folder, (("ann", False), ("bob", False))) as opened:
        yield opened


def _thread(client: TestClient, question: str, headers: dict[str, str]) -> dict[str, Any]:
    response = client.post(
        "/api/chat", json={"mode": "extractive", "question": question}, headers=headers
    )
    assert response.status_code == 200, response.text
    kind, data = None, {}
    for block in response.text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        kind, data = fields["event"], json.loads(fields["data"])
    assert kind == "done", data
    assert data["answer"]["citations"], data["answer"]["text"]
    return data


@dataclass
class Shared:
    thread: str
    token: str
    done: dict[str, Any]
    ann: dict[str, str]
    bob: dict[str, str]


@pytest.fixture(scope="module")
def shared(site: Site) -> Shared:
    ann, bob = login(site.client, "ann"), login(site.client, "bob")
    done = _thread(site.client, FIRST, ann)
    made = site.client.post(f"/api/threads/{done['thread']}/share", headers=ann)
    assert made.status_code == 200, made.text
    token = made.json()["token"]
    assert len(token) == 32 and made.json()["url"] == f"/?shared={token}"
    again = site.client.post(f"/api/threads/{done['thread']}/share", headers=ann)
    assert again.json()["token"] == token  # the open link, not a second one
    return Shared(done["thread"], token, done, ann, bob)


def test_a_signed_in_user_opens_the_link_read_only(site: Site, shared: Shared) -> None:
    opened = site.client.get(f"/api/shared/{shared.token}", headers=shared.bob)
    assert opened.status_code == 200, opened.text
    data = opened.json()
    assert data["read_only"] is True and data["title"] == FIRST
    (turn,) = data["turns"]
    shown = shared.done["answer"]
    assert turn["question"] == FIRST and turn["answer"]["text"] == shown["text"]
    for stored, was in zip(turn["answer"]["citations"], shown["citations"], strict=True):
        assert (stored["doc_id"], stored["start"], stored["end"]) == (
            was["doc_id"],
            was["start"],
            was["end"],
        )
        expected = "current" if was["state"] in ("supported", "quote_only") else "unchecked"
        assert stored["recheck"]["state"] == expected, stored["recheck"]
    # read-only: bob cannot continue, rename, share or revoke ann's thread
    follow = site.client.post(
        "/api/chat",
        json={"mode": "extractive", "question": "And then?", "thread": shared.thread},
        headers=shared.bob,
    )
    assert follow.status_code == 404, follow.text
    url = f"/api/threads/{shared.thread}"
    assert site.client.get(url, headers=shared.bob).status_code == 404
    assert site.client.post(f"{url}/share", headers=shared.bob).status_code == 404
    assert site.client.delete(f"{url}/share", headers=shared.bob).status_code == 404
    assert site.client.get(f"/api/shared/{shared.token}", headers=shared.bob).status_code == 200
    assert len(site.client.get(url, headers=shared.ann).json()["turns"]) == 1


def test_without_a_session_the_link_is_401(site: Site, shared: Shared) -> None:
    site.client.cookies.clear()
    assert site.client.get(f"/api/shared/{shared.token}").status_code == 401


def test_a_document_the_user_may_not_see_makes_it_404_as_an_unknown_token(
    site: Site, shared: Shared
) -> None:
    unknown = site.client.get(f"/api/shared/{UNKNOWN}", headers=shared.bob)
    assert unknown.status_code == 404
    cited = shared.done["answer"]["citations"][0]["doc_id"]
    store = site.store()
    try:
        ann = store.user("ann")
        assert ann is not None
        before = store.document(cited)
        assert before is not None
        assert store.set_document_access(cited, ann.id, "private")
        closed = site.client.get(f"/api/shared/{shared.token}", headers=shared.bob)
        assert (closed.status_code, closed.content) == (404, unknown.content)
        assert cited not in closed.text and FIRST not in closed.text
        mine = site.client.get(f"/api/shared/{shared.token}", headers=shared.ann)
        assert mine.status_code == 200, mine.text  # ann may see it
        assert store.set_document_access(cited, before.owner, before.visibility)
    finally:
        store.close()
    assert site.client.get(f"/api/shared/{shared.token}", headers=shared.bob).status_code == 200


def test_revoking_makes_the_link_404_for_good(site: Site, shared: Shared) -> None:
    url = f"/api/threads/{shared.thread}/share"
    assert site.client.delete(url, headers=shared.ann).status_code == 204
    unknown = site.client.get(f"/api/shared/{UNKNOWN}", headers=shared.bob)
    for who in (shared.bob, shared.ann):
        gone = site.client.get(f"/api/shared/{shared.token}", headers=who)
        assert (gone.status_code, gone.content) == (404, unknown.content)
    made = site.client.post(url, headers=shared.ann)
    assert made.status_code == 200 and made.json()["token"] != shared.token
    assert site.client.get(f"/api/shared/{shared.token}", headers=shared.bob).status_code == 404
    fresh = site.client.get(f"/api/shared/{made.json()['token']}", headers=shared.bob)
    assert fresh.status_code == 200, fresh.text


def test_a_deleted_cited_document_makes_the_link_404(site: Site, shared: Shared) -> None:
    """Last in the module: it deletes a seed document."""
    done = _thread(site.client, OTHER, shared.ann)
    token = site.client.post(f"/api/threads/{done['thread']}/share", headers=shared.ann).json()[
        "token"
    ]
    assert site.client.get(f"/api/shared/{token}", headers=shared.bob).status_code == 200
    store = site.store()
    try:
        assert store.delete_document(done["answer"]["citations"][0]["doc_id"]) is not None
    finally:
        store.close()
    for who in (shared.bob, shared.ann):
        assert site.client.get(f"/api/shared/{token}", headers=who).status_code == 404
