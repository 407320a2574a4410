"""Scoped questions (issue 26 item 3), on both backends (a real SQLite file and a real
PostgreSQL, tests/helpers/pg_server.py): a search or an answer limited to chosen documents or to
a user's named collection reads only those, in every mode and through every door (the HTTP API,
MCP, the CLI); a document the caller may not see is a 404 as a missing one; a scope left empty is
a 400 (exit 2); a collection is its user's alone and goes with them; the store keeps
collections on both backends alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.pg_server import Backend
from tests.helpers.sites import login
from truthbase import accounts
from truthbase.api import Library
from truthbase.cli import cli
from truthbase.config import AuthSettings, ServerSettings, Settings
from truthbase.embed import Embedder
from truthbase.errors import InvalidInput
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.mcp.tools import call_tool
from truthbase.people import CollectionRecord, Viewer
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

PASSWORD = "correct horse battery"
QUESTION = "What does the document say?"


# -- the store: collections on both backends ----------------------------------------------------


def test_collections_are_kept_per_user_and_go_with_their_user(backend: Backend) -> None:
    store = backend.open()
    try:
        ann = accounts.add_user(store, "ann", PASSWORD)
        store.add_collection(
            CollectionRecord(name="work", user_id=ann.id, documents=("b", "a"), created_at="t")
        )
        # the same name for another owner (here the operator's, user_id None) is another one
        store.add_collection(CollectionRecord(name="work", user_id=None, created_at="t"))
        with pytest.raises(InvalidInput, match="exists already"):
            store.add_collection(CollectionRecord(name="work", user_id=ann.id, created_at="t"))
        kept = store.collection(ann.id, "work")
        assert kept is not None and kept.documents == ("a", "b")
        assert store.collection(None, "work") is not None
        assert store.collection(None, "work").documents == ()  # type: ignore[union-attr]
        assert store.change_collection(ann.id, "work", add=["c", "a"], remove=["b"])
        assert store.collection(ann.id, "work").documents == ("a", "c")  # type: ignore[union-attr]
        assert not store.change_collection(ann.id, "nope", add=["x"])
        store.add_collection(CollectionRecord(name="home", user_id=ann.id, created_at="t"))
        with pytest.raises(InvalidInput, match="exists already"):
            store.rename_collection(ann.id, "home", "work")
        assert store.rename_collection(ann.id, "home", "house")
        assert [c.name for c in store.collections(ann.id)] == ["house", "work"]
        assert store.remove_collection(ann.id, "house")
        assert not store.remove_collection(ann.id, "house")
        store.remove_user("ann")  # ON DELETE CASCADE, as sessions and tokens
        assert store.collections(ann.id) == []
        assert [c.name for c in store.collections(None)] == ["work"]
    finally:
        store.close()


def test_a_copy_into_postgres_keeps_the_collections(tmp_path: Path) -> None:
    from tests.helpers.pg_server import copy_into_postgres, shared_server
    from truthbase.store.postgres import PostgresStore

    source = SQLiteStore(tmp_path / "source.sqlite")
    try:
        ann = accounts.add_user(source, "ann", PASSWORD)
        source.add_collection(
            CollectionRecord(name="hers", user_id=ann.id, documents=("a",), created_at="t")
        )
        source.add_collection(CollectionRecord(name="ops", user_id=None, created_at="t"))
    finally:
        source.close()
    url = copy_into_postgres(tmp_path / "source.sqlite")
    target = PostgresStore(url)
    try:
        assert target.collections(ann.id) == [
            CollectionRecord(name="hers", user_id=ann.id, documents=("a",), created_at="t")
        ]
        assert [c.name for c in target.collections(None)] == ["ops"]
    finally:
        target.close()
        shared_server().drop_database(url)


# -- a library of three documents, served over both backends ------------------------------------


@dataclass
class Shelf:
    """ann's private PDF and two shared PDFs."""

    db: Path
    private_pdf: str
    shared_a: str
    shared_b: str


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Shelf:
    folder = tmp_path_factory.mktemp("scope")
    db = folder / "scope.sqlite"
    store = SQLiteStore(db)
    try:
        settings = Settings(db=db)
        accounts.add_user(store, "ann", PASSWORD)
        accounts.add_user(store, "bob", PASSWORD)
        ann = store.user("ann").id
        ids = {}
        for name, path, owner in (
            ("private_pdf", ROBUSTNESS / "pdfminer-pagelabels.pdf", ann),
            ("shared_a", ROBUSTNESS / "pdfminer-jo.pdf", None),
            ("shared_b", ROBUSTNESS / "pdfplumber-scotus-transcript-p1.pdf", None),
        ):
            options = IngestOptions.from_settings(
                settings, owner=owner, visibility="private" if owner else "shared"
            )
            outcome = ingest_file(path, store, embedder, options)
            assert outcome.status == "ingested" and outcome.doc_id is not None, outcome
            ids[name] = outcome.doc_id
    finally:
        store.close()
    return Shelf(db=db, **ids)


@pytest.fixture(scope="module", params=("sqlite", "postgres"))
def settings(
    request: pytest.FixtureRequest, library: Shelf, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    folder = tmp_path_factory.mktemp(f"scope-{request.param}")
    auth = AuthSettings(secret_key_file=folder / "secret.key")
    server = ServerSettings(agent_mode="everyone", allowed_hosts=["testserver"])
    if request.param == "sqlite":
        yield Settings(db=library.db, auth=auth, server=server)
        return
    from tests.helpers.pg_server import copy_into_postgres, shared_server

    url = copy_into_postgres(library.db)
    yield Settings(db=folder / "unused.sqlite", database_url=url, auth=auth, server=server)
    shared_server().drop_database(url)


@pytest.fixture(scope="module")
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def _search_docs(client: TestClient, headers: dict[str, str], query: str) -> set[str]:
    response = client.get(f"/api/search?q=the&k=30{query}", headers=headers)
    assert response.status_code == 200, response.text
    return {hit["doc_id"] for hit in response.json()["results"]}


def _chat_sources(
    client: TestClient, headers: dict[str, str], body: dict[str, Any]
) -> tuple[int, set[str]]:
    response = client.post("/api/chat", json={"question": QUESTION, **body}, headers=headers)
    if response.status_code != 200:
        return response.status_code, set()
    events = _sse(response.text)
    assert events[-1][0] == "done", events[-1]
    sources = next(data for kind, data in events if kind == "sources")["sources"]
    return 200, {s["doc_id"] for s in sources}


def test_search_and_chat_read_only_the_documents_asked_for(
    client: TestClient, library: Shelf
) -> None:
    ann = login(client, "ann")
    everything = {library.private_pdf, library.shared_a, library.shared_b}
    assert _search_docs(client, ann, "") == everything  # unscoped: all three answer "the"
    one = f"&documents={library.shared_a}"
    assert _search_docs(client, ann, one) == {library.shared_a}
    two = f"&documents={library.shared_a[:8]}&documents={library.private_pdf}"
    assert _search_docs(client, ann, two) == {library.shared_a, library.private_pdf}
    for mode in ("extractive", "agent"):
        status, sources = _chat_sources(
            client, ann, {"mode": mode, "documents": [library.shared_b]}
        )
        assert status == 200 and sources <= {library.shared_b}, (mode, sources)


def test_a_hidden_document_is_404_and_an_empty_scope_400(
    client: TestClient, library: Shelf
) -> None:
    bob = login(client, "bob")
    hidden = f"&documents={library.private_pdf}"
    response = client.get(f"/api/search?q=the{hidden}", headers=bob)
    missing = client.get(f"/api/search?q=the&documents={'0' * 64}", headers=bob)
    assert response.status_code == missing.status_code == 404
    assert response.json()["detail"].replace(library.private_pdf, "X") == missing.json()[
        "detail"
    ].replace("0" * 64, "X")  # the same answer: nothing tells a hidden one from a missing one
    status, _ = _chat_sources(client, bob, {"documents": [library.private_pdf]})
    assert status == 404
    # bob keeps a collection of a document that becomes private to him: it drops out
    created = client.post(
        "/api/collections", json={"name": "gone", "documents": [library.shared_a]}, headers=bob
    )
    assert created.status_code == 201, created.text
    store = _store_of(client)
    store.set_document_access(library.shared_a, store.user("ann").id, "private")
    try:
        assert client.get("/api/collections", headers=bob).json()["collections"] == [
            {"name": "gone", "documents": [], "created_at": created.json()["created_at"]}
        ]
        response = client.get("/api/search?q=the&collection=gone", headers=bob)
        assert response.status_code == 400 and "no document" in response.json()["detail"]
        status, _ = _chat_sources(client, bob, {"collection": "gone"})
        assert status == 400
    finally:
        store.set_document_access(library.shared_a, None, "shared")
        client.delete("/api/collections/gone", headers=bob)


def _store_of(client: TestClient) -> Any:
    """The app's open store (the TestClient's app state)."""
    return client.app.state.truthbase.store  # type: ignore[attr-defined]


def test_a_collection_scopes_a_question_and_is_its_users_alone(
    client: TestClient, library: Shelf
) -> None:
    ann, bob = login(client, "ann"), login(client, "bob")
    body = {"name": "pair", "documents": [library.private_pdf, library.shared_b[:6]]}
    created = client.post("/api/collections", json=body, headers=ann)
    assert created.status_code == 201, created.text
    assert created.json()["documents"] == sorted([library.private_pdf, library.shared_b])
    try:
        assert client.post("/api/collections", json=body, headers=ann).status_code == 400
        pair = "&collection=pair"
        assert _search_docs(client, ann, pair) == {library.private_pdf, library.shared_b}
        both = f"{pair}&documents={library.shared_a}"
        assert _search_docs(client, ann, both) == {
            library.private_pdf,
            library.shared_a,
            library.shared_b,
        }
        status, sources = _chat_sources(client, ann, {"mode": "extractive", "collection": "pair"})
        assert status == 200 and sources and sources <= {library.private_pdf, library.shared_b}
        # bob neither sees nor uses ann's collection, nor puts her private document in his own
        assert client.get("/api/collections", headers=bob).json() == {"collections": []}
        assert client.get(f"/api/search?q=the{pair}", headers=bob).status_code == 404
        assert _chat_sources(client, bob, {"collection": "pair"})[0] == 404
        assert client.patch("/api/collections/pair", json={}, headers=bob).status_code == 404
        own = {"name": "mine", "documents": [library.private_pdf]}
        assert client.post("/api/collections", json=own, headers=bob).status_code == 404
        # add, remove and rename in one change
        changed = client.patch(
            "/api/collections/pair",
            json={"add": [library.shared_a], "remove": [library.private_pdf], "name": "two"},
            headers=ann,
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["name"] == "two"
        assert changed.json()["documents"] == sorted([library.shared_a, library.shared_b])
        assert _search_docs(client, ann, "&collection=two") == {
            library.shared_a,
            library.shared_b,
        }
        assert client.get("/api/search?q=the&collection=pair", headers=ann).status_code == 404
    finally:
        for name in ("pair", "two"):
            client.delete(f"/api/collections/{name}", headers=ann)
    assert client.get("/api/collections", headers=ann).json() == {"collections": []}


def test_mcp_tools_and_the_python_api_take_the_same_scope(
    settings: Settings, library: Shelf, embedder: Embedder
) -> None:
    with Library(settings=settings, embedder=embedder) as opened:
        bob_user = opened.store.user("bob")
        service = opened.for_viewer(Viewer(user="bob", user_id=bob_user.id))
        result = call_tool(
            service, "search", {"query": "the", "k": 20, "documents": [library.shared_b]}
        )
        assert not result.is_error, result.content
        assert {r["doc_id"] for r in result.structured_content["results"]} == {library.shared_b}
        hidden = call_tool(service, "search", {"query": "the", "documents": [library.private_pdf]})
        assert hidden.is_error and "NotFound" in hidden.content[0].text
        service.create_collection("mcp", [library.shared_a])
        try:
            listed = call_tool(service, "list_collections", {})
            assert listed.structured_content == {
                "collections": [{"name": "mcp", "documents": [library.shared_a]}]
            }
            asked = call_tool(
                service, "ask", {"question": QUESTION, "mode": "extractive", "collection": "mcp"}
            )
            assert not asked.is_error, asked.content
            cited = {s["doc_id"] for s in asked.structured_content["sources"]}
            assert cited and cited <= {library.shared_a}
            # the Python API is the same service: its search takes the same scope
            hits = service.search("the", k=20, collection="mcp")
            assert hits and {h.chunk.doc_id for h in hits} == {library.shared_a}
        finally:
            service.delete_collection("mcp")


def test_the_cli_scopes_ask_and_search_and_keeps_collections(library: Shelf) -> None:
    runner = CliRunner()
    db = ["--db", str(library.db)]

    def run(*args: str) -> Any:
        return runner.invoke(cli, [*db, *args], catch_exceptions=False)

    created = run("collections", "create", "cli", library.shared_a[:8])
    assert created.exit_code == 0, created.output
    try:
        listed = json.loads(run("collections", "list", "--json").output)
        assert listed == {"collections": [{"name": "cli", "documents": [library.shared_a]}]}
        search = run("search", "the", "--json", "--k", "20", "--collection", "cli")
        assert search.exit_code == 0, search.output
        assert {r["doc_id"] for r in json.loads(search.output)["results"]} == {library.shared_a}
        search = run("search", "the", "--json", "--k", "20", "--doc", library.shared_b[:6])
        assert {r["doc_id"] for r in json.loads(search.output)["results"]} == {library.shared_b}
        asked = run("ask", QUESTION, "--json", "--mode", "extractive", "--collection", "cli")
        assert asked.exit_code == 0, asked.output
        sources = {s["doc_id"] for s in json.loads(asked.output)["sources"]}
        assert sources and sources <= {library.shared_a}
        missing = runner.invoke(cli, [*db, "search", "the", "--collection", "nope"])
        assert missing.exit_code == 2 and "no collection" in missing.output
        assert run("collections", "remove", "cli", library.shared_a).exit_code == 0
        empty = runner.invoke(cli, [*db, "search", "the", "--collection", "cli"])
        assert empty.exit_code == 2 and "no document" in empty.output
        assert run("collections", "rename", "cli", "cli2").exit_code == 0
    finally:
        run("collections", "delete", "cli2")
    assert json.loads(run("collections", "list", "--json").output) == {"collections": []}
