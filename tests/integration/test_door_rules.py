"""One rule, every door: the same request through two doors (the web app over HTTP, the MCP
tools, the command line, the Python API) gets the same decision, because each door only
translates and the decision is the application service's (:mod:`truthbase.app`).

Each test runs a real index (the seed PDFs plus a private PDF of ann's), real accounts and API
tokens, the FastAPI app through its TestClient, and the MCP server's own tool entry point with
the caller found from the bearer token, as its HTTP transport finds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers import indexes
from tests.helpers.corpus import ROBUSTNESS
from truthbase import accounts
from truthbase.api import Library
from truthbase.app import AGENT_REFUSED, Forbidden
from truthbase.app import service as app_service
from truthbase.app.accounts import ADMINS_ONLY
from truthbase.app.redaction import ERROR_MESSAGE
from truthbase.app.uploads import receive_path
from truthbase.cli import cli
from truthbase.config import (
    AuthSettings,
    QuotaSettings,
    ServerSettings,
    Settings,
    UploadSettings,
    data_folder,
)
from truthbase.embed import Embedder
from truthbase.errors import InvalidInput, NotFound, Unavailable
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.mcp import call_tool, viewer_for
from truthbase.mcp.server import McpAuthError
from truthbase.people import Viewer
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.corpus]

PASSWORD = "correct horse battery"
QUESTION = "What are the six CSF Functions?"
#: The peer address the TestClient reports, given to the MCP door as its HTTP transport would.
ADDRESS = "testclient"


@dataclass
class Index:
    db: Path
    private: str  # ann's private PDF
    spare: str  # ann's private PDF held by bob and carol (the delete test's)
    seed: list[str]
    tokens: dict[str, str]
    users: dict[str, str]  # name -> the user's id (documents name their owner and holders by it)


@pytest.fixture(scope="module")
def index(seed_db: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Index:
    db = indexes.use_copy(seed_db, tmp_path_factory.mktemp("doors") / "doors.sqlite")
    store = SQLiteStore(db)
    try:
        seed = [d.id for d in store.list_documents()]
        tokens, users = {}, {}
        for user in ("ann", "bob", "carol", "root"):
            users[user] = accounts.add_user(store, user, PASSWORD, admin=user == "root").id
            tokens[user] = accounts.create_token(store, user).secret
        ids = []
        for name in ("pdfminer-pagelabels.pdf", "pdfminer-jo.pdf"):
            outcome = ingest_file(
                ROBUSTNESS / name,
                store,
                embedder,
                IngestOptions(
                    chunking=Settings(db=db).chunking, owner=users["ann"], visibility="private"
                ),
            )
            assert outcome.status == "ingested" and outcome.doc_id is not None, outcome
            ids.append(outcome.doc_id)
        for holder in ("bob", "carol"):
            store.add_holder(ids[1], users[holder])
    finally:
        store.close()
    return Index(db, ids[0], ids[1], seed, tokens, users)


def _settings(index: Index, folder: Path, **quota: int) -> Settings:
    return Settings(
        db=index.db,
        auth=AuthSettings(secret_key_file=folder / "secret.key"),
        server=ServerSettings(allowed_hosts=["testserver"]),
        quota=QuotaSettings(**quota),  # type: ignore[arg-type]
    )


@contextmanager
def _doors(settings: Settings, embedder: Embedder) -> Iterator[tuple[TestClient, Library]]:
    """The web app (its TestClient) and the Python API over one index, with one embedder."""
    app = create_app(settings)
    with TestClient(app) as client, Library(settings=settings, embedder=embedder) as library:
        app.state.truthbase._embedder = embedder  # the suite's, not a second load of it
        yield client, library


def _bearer(index: Index, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {index.tokens[user]}"}


def _mcp(
    library: Library, index: Index, user: str, tool: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """One MCP tool call as ``user``'s token, from :data:`ADDRESS` (as over streamable HTTP)."""
    viewer = viewer_for(
        library, "127.0.0.1", {"authorization": _bearer(index, user)["Authorization"]}
    )
    return call_tool(library.for_viewer(viewer), tool, arguments, address=ADDRESS)


def _text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_agent_mode_is_refused_to_a_non_admin_on_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    with _doors(_settings(index, tmp_path), embedder) as (client, library):
        body = {"question": QUESTION, "mode": "agent"}
        response = client.post("/api/chat", json=body, headers=_bearer(index, "bob"))
        refused = _mcp(library, index, "bob", "ask", body)
    assert response.status_code == 403
    assert response.json() == {"detail": AGENT_REFUSED}
    assert refused.is_error and AGENT_REFUSED in _text(refused)


def test_the_quota_is_one_counter_for_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    body = {"question": QUESTION, "mode": "extractive"}
    with _doors(_settings(index, tmp_path, per_client_per_day=1), embedder) as (client, library):
        first = client.post("/api/chat", json=body, headers=_bearer(index, "bob"))
        again_http = client.post("/api/chat", json=body, headers=_bearer(index, "bob"))
        again_mcp = _mcp(library, index, "bob", "ask", body)
        # carol spends hers through MCP: the web app then refuses her too.
        carol_mcp = _mcp(library, index, "carol", "ask", body)
        carol_http = client.post("/api/chat", json=body, headers=_bearer(index, "carol"))
        # The Python API (no network client) is not counted.
        bob_api = list(
            library.for_viewer(Viewer(user="bob", user_id=index.users["bob"])).ask(
                QUESTION, mode="extractive"
            )
        )
    assert first.status_code == 200 and _sse(first.text)[-1][0] == "done"
    assert again_http.status_code == 429 and int(again_http.headers["Retry-After"]) >= 1
    assert again_http.json() == {"detail": "quota exceeded: try again later"}
    assert again_mcp.is_error and _text(again_mcp).startswith("quota exceeded: try again in ")
    assert not carol_mcp.is_error, _text(carol_mcp)
    assert carol_http.status_code == 429
    assert bob_api[-1].kind == "done"


def test_what_a_non_admin_is_shown_of_a_failure_is_the_same_on_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = "http://10.9.8.7:8000/v1"

    def failing(*args: object, **kwargs: object) -> Iterator[object]:
        raise Unavailable(f"the chat model at {endpoint} did not answer")
        yield

    monkeypatch.setattr(app_service, "answer_events", failing)
    body = {"question": QUESTION, "mode": "extractive"}
    with _doors(_settings(index, tmp_path), embedder) as (client, library):
        http = {
            user: _sse(client.post("/api/chat", json=body, headers=_bearer(index, user)).text)
            for user in ("bob", "root")
        }
        mcp = {user: _text(_mcp(library, index, user, "ask", body)) for user in ("bob", "root")}
    assert http["bob"] == [
        ("error", {"type": "error", "stage": "answer", "message": ERROR_MESSAGE})
    ]
    assert mcp["bob"] == f"InvalidInput: the answer failed at answer: {ERROR_MESSAGE}"
    assert endpoint in http["root"][0][1]["message"]
    assert endpoint in mcp["root"]


def test_doc_keeps_every_mode_to_one_document_on_every_door(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    settings = _settings(index, tmp_path)
    with _doors(settings, embedder) as (client, library):
        unscoped = json.loads(_text(_mcp(library, index, "root", "ask", {"question": QUESTION})))
        everywhere = {s["doc_id"] for s in unscoped["sources"]}
        # Not the document the best source is from: scoping to it changes the sources.
        doc = next(d for d in index.seed if d != unscoped["sources"][0]["doc_id"])
        answers_before = len(library.store.answers())
        body = {"question": QUESTION, "mode": "extractive", "doc": doc}
        http = _sse(client.post("/api/chat", json=body, headers=_bearer(index, "root")).text)
        mcp = json.loads(_text(_mcp(library, index, "root", "ask", {**body, "doc": doc[:12]})))
        cli_run = CliRunner().invoke(
            cli,
            [
                *("--db", str(index.db), "ask", "--mode", "extractive"),
                "--doc",
                doc[:12],
                "--json",
                QUESTION,
            ],
        )
        assert cli_run.exit_code == 0, cli_run.output
        answered = json.loads(cli_run.stdout[cli_run.stdout.index("{") :])
        recorded = len(library.store.answers()) - answers_before
    assert everywhere != {doc}  # without doc the sources are not all this document's
    http_sources = dict(http)["sources"]["sources"]
    assert http_sources and {s["doc_id"] for s in http_sources} == {doc}
    assert mcp["sources"] and {s["doc_id"] for s in mcp["sources"]} == {doc}
    assert answered["sources"] and {s["doc_id"] for s in answered["sources"]} == {doc}
    assert recorded == 3  # each door's answer was recorded for `truthbase verify`


def test_a_hidden_document_is_not_found_on_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    hidden = index.private
    with _doors(_settings(index, tmp_path), embedder) as (client, library):
        bob = _bearer(index, "bob")
        chat = client.post("/api/chat", json={"question": QUESTION, "doc": hidden}, headers=bob)
        file = client.get(f"/api/documents/{hidden}/file", headers=bob)
        span = client.get(f"/api/spans?doc={hidden}&page=1&start=0&end=5", headers=bob)
        ask = _mcp(library, index, "bob", "ask", {"question": QUESTION, "doc": hidden})
        passage = _mcp(
            library, index, "bob", "get_passage", {"doc": hidden, "unit": 0, "start": 0, "end": 5}
        )
        # Its owner reaches it through both.
        ann_span = client.get(
            f"/api/spans?doc={hidden}&page=1&start=0&end=5", headers=_bearer(index, "ann")
        )
        ann_passage = _mcp(
            library, index, "ann", "get_passage", {"doc": hidden, "unit": 0, "start": 0, "end": 5}
        )
    for response in (chat, file, span):
        assert response.status_code == 404, response.request.url
    assert chat.json() == {"detail": f"no document {hidden}"}
    for result in (ask, passage):
        assert _text(result) == f"NotFound: no document {hidden}"
    assert ann_span.status_code == 200 and not ann_passage.is_error


def test_delete_releases_holders_and_leaves_to_the_heir_through_the_service(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    doc = index.spare
    with _doors(_settings(index, tmp_path), embedder) as (client, library):
        store = library.store
        # bob holds ann's document: deleting it over HTTP lets go of his hold only.
        released = client.delete(f"/api/documents/{doc}", headers=_bearer(index, "bob"))
        after_bob = store.document(doc)
        # ann owns it and carol holds it: ann deleting it through the Python API leaves it to carol.
        outcome = library.for_viewer(
            Viewer(user="ann", user_id=index.users["ann"])
        ).delete_document(doc)
        after_ann = store.document(doc)
        ann_sees = [
            d["doc_id"]
            for d in json.loads(_text(_mcp(library, index, "ann", "list_documents", {})))[
                "documents"
            ]
        ]
        # carol, the owner now and holding no one's, deletes it over HTTP: it is gone.
        gone = client.delete(f"/api/documents/{doc}", headers=_bearer(index, "carol"))
        after_carol = store.document(doc)
    assert released.status_code == 200 and released.json() == {"deleted": doc}
    assert (
        after_bob is not None
        and after_bob.owner == index.users["ann"]
        and list(after_bob.holders) == [index.users["carol"]]
    )
    assert outcome == "inherited"
    assert (
        after_ann is not None and after_ann.owner == index.users["carol"] and not after_ann.holders
    )
    assert doc not in ann_sees
    assert gone.status_code == 200 and after_carol is None


# -- uploads: the limits are the Service's, whichever door the file comes through --------------

UPLOADED = ("pdfminer-matplotlib.pdf", "pdfjs-vertical.pdf", "ocrmypdf-type3_font_nomapping.pdf")


def _upload_settings(index: Index, folder: Path, **library: int | None) -> Settings:
    """Settings over a copy of the index (the jobs stay queued: no worker runs them)."""
    settings = _settings(index, folder)
    return settings.model_copy(
        update={
            "db": indexes.use_copy(index.db, folder / "uploads.sqlite"),
            "library": UploadSettings(server_workers=0, data_dir=folder / "data", **library),  # type: ignore[arg-type]
        }
    )


def _post_file(client: TestClient, index: Index, user: str, name: str, **form: str) -> Any:
    data = (ROBUSTNESS / name).read_bytes()
    return client.post(
        "/api/documents",
        files={"file": (name, data, "application/pdf")},
        data=form,
        headers=_bearer(index, user),
    )


def _as(library: Library, index: Index, user: str) -> Library:
    return library.for_viewer(Viewer(user=user, user_id=index.users[user]))


def test_the_uploads_per_day_are_one_counter_for_the_web_and_the_api(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    settings = _upload_settings(index, tmp_path, files_per_day=1)
    data_dir = data_folder(settings)
    with _doors(settings, embedder) as (client, library):
        # bob uploads over HTTP: the Python API then refuses his next file.
        bob_http = _post_file(client, index, "bob", UPLOADED[0])
        bob_api = _as(library, index, "bob").upload(
            [receive_path(ROBUSTNESS / UPLOADED[1], data_dir)]
        )
        # carol uploads through the API: the web app then refuses hers.
        carol_api = _as(library, index, "carol").upload(
            [receive_path(ROBUSTNESS / UPLOADED[1], data_dir)]
        )
        carol_http = _post_file(client, index, "carol", UPLOADED[2])
        jobs = library.store.jobs()
    assert bob_http.status_code == 202 and len(bob_http.json()["jobs"]) == 1
    assert not bob_api.jobs and bob_api.refused is not None
    assert bob_api.refused.limit == "files_per_day"
    assert carol_api.refused is None and [j.filename for j in carol_api.jobs] == [UPLOADED[1]]
    assert carol_http.status_code == 429
    assert carol_http.json() == {
        "detail": str(bob_api.refused),
        "limit": "files_per_day",
        "jobs": [],
    }
    owners = sorted(j.owner or "" for j in jobs)
    assert owners == sorted([index.users["bob"], index.users["carol"]])
    # Nothing refused is left behind: only the two queued files were placed.
    placed = sorted(p.name for p in (data_dir / "uploads").glob("*/*.pdf"))
    assert len(placed) == 2 and not list((data_dir / "uploads" / ".incoming").iterdir())


def test_the_bytes_a_user_may_hold_and_the_visibility_field_on_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    small = (ROBUSTNESS / UPLOADED[0]).stat().st_size
    settings = _upload_settings(index, tmp_path, bytes_per_user=small + 10)
    data_dir = data_folder(settings)
    with _doors(settings, embedder) as (client, library):
        ann = _as(library, index, "ann")
        wrong_http = _post_file(client, index, "ann", UPLOADED[0], visibility="public")
        with pytest.raises(InvalidInput) as wrong_api:
            ann.upload([receive_path(ROBUSTNESS / UPLOADED[0], data_dir)], visibility="public")
        first = _post_file(client, index, "ann", UPLOADED[0], visibility="shared")
        # Over the bytes she may hold: 413 over HTTP, the same refusal through the API.
        over_http = _post_file(client, index, "ann", UPLOADED[1])
        over_api = ann.upload([receive_path(ROBUSTNESS / UPLOADED[2], data_dir)])
        visibilities = {j.filename: j.visibility for j in library.store.jobs()}
    assert wrong_http.status_code == 422
    assert wrong_http.json() == {"detail": str(wrong_api.value)}
    assert first.status_code == 202 and visibilities == {UPLOADED[0]: "shared"}
    assert over_http.status_code == 413 and over_http.json()["limit"] == "bytes_stored"
    assert over_api.refused is not None and over_api.refused.limit == "bytes_stored"
    assert not list((data_dir / "uploads" / ".incoming").iterdir())


# -- accounts and tokens: the CLI's acts take effect on the web app and MCP alike ---------------


def test_a_token_made_and_revoked_by_the_cli_opens_and_closes_both_doors(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    settings = _settings(index, tmp_path)
    runner = CliRunner()
    made = runner.invoke(cli, ["--db", str(index.db), "tokens", "create", "--user", "bob"])
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    token_id = made.stderr.split()[1]  # "token ID for bob: shown once, ..."
    header = {"Authorization": f"Bearer {secret}"}
    with _doors(settings, embedder) as (client, library):
        me_before = client.get("/api/me", headers=header)
        mcp_before = viewer_for(library, "0.0.0.0", {"authorization": header["Authorization"]})
        revoked = runner.invoke(cli, ["--db", str(index.db), "tokens", "revoke", token_id])
        assert revoked.exit_code == 0, revoked.output
        me_after = client.get("/api/me", headers=header)
        with pytest.raises(McpAuthError):
            viewer_for(library, "0.0.0.0", {"authorization": header["Authorization"]})
    assert me_before.status_code == 200 and me_before.json()["user"] == "bob"
    assert mcp_before.user == "bob"
    assert me_after.status_code == 401


def test_accounts_are_for_admins_on_the_web_and_through_the_service(
    index: Index, embedder: Embedder, tmp_path: Path
) -> None:
    with _doors(_settings(index, tmp_path), embedder) as (client, library):
        bob = _as(library, index, "bob")
        usage_http = client.get("/api/admin/usage", headers=_bearer(index, "bob"))
        root_http = client.get("/api/admin/usage", headers=_bearer(index, "root"))
        refusals = []
        for act in (
            bob.usage,
            lambda: bob.create_token("ann"),
            lambda: bob.set_password("ann", PASSWORD),
            lambda: bob.add_user("mallory", PASSWORD, admin=True),
            lambda: bob.remove_user("ann", delete_documents=True),
        ):
            with pytest.raises(Forbidden) as refused:
                act()
            refusals.append(str(refused.value))
        # One's own token: made, listed (only one's own) and revoked through the Service.
        own = bob.create_token("bob", "script")
        names = {u.id: u.name for u in library.store.users()}  # tokens name their user by id
        own_listed = {names[t.user_id] for t in bob.tokens()}
        with pytest.raises(Forbidden):
            bob.tokens("ann")
        bob.revoke_token(own.record.id)
        with pytest.raises(NotFound):
            ann_id = next(i for i, name in names.items() if name == "ann")
            bob.revoke_token(next(t.id for t in library.store.tokens(ann_id)))
        root_rows = {r["name"] for r in root_http.json()["users"]}
    assert usage_http.status_code == 403 and usage_http.json() == {"detail": ADMINS_ONLY}
    assert refusals[0] == ADMINS_ONLY and refusals[-2:] == [ADMINS_ONLY, ADMINS_ONLY]
    assert refusals[1] == refusals[2] != ADMINS_ONLY  # one's own, or an admin's
    assert root_http.status_code == 200 and {"ann", "bob", "carol", "root"} <= root_rows
    assert own_listed == {"bob"}
