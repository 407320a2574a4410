"""Accounts and who sees what, at the HTTP API, on both backends (a real SQLite file and a real
PostgreSQL, tests/helpers/pg_server.py): anonymous requests to every /api route get 401 once
users exist (the routes are enumerated from the app, so a new route is covered without editing
this file); a second user gets 404 for the first user's private PDF and EPUB on documents,
search, chat sources (extractive and agent mode), file, span, reader and image routes; tokens
work and revoked ones stop; the session cookie's flags; cross-site POSTs; per-user quotas; the
local mode without accounts; `serve --host 0.0.0.0` without a user."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.routes import served_routes
from tests.helpers.sites import login
from truthbase import accounts
from truthbase.cli import cli
from truthbase.config import AuthSettings, QuotaSettings, ServerSettings, Settings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

PASSWORD = "correct horse battery"
#: Words only the private documents hold (the EPUB's chapter; checked below for the PDF).
SECRET_QUESTION = "Where is the secret meadow of the striped zebras?"


def _tiny_epub(path: Path) -> Path:
    xhtml = "http://www.w3.org/1999/xhtml"
    chapter = (
        f'<?xml version="1.0" encoding="utf-8"?><html xmlns="{xhtml}"><head><title>t</title>'
        "</head><body><h1>The secret meadow</h1><p>The secret meadow of the striped zebras "
        "lies beyond the quiet river, where the striped zebras graze at dawn.</p>"
        "<p>Nobody else knows the way to the meadow of the zebras.</p></body></html>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Zebra Notes</dc:title>'
        "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/content.opf", opf)
        zf.writestr("OEBPS/ch1.xhtml", chapter)
    return path


@dataclass
class Library:
    """An index of three documents: ann's private PDF and EPUB, and a shared PDF."""

    db: Path
    private_pdf: str
    private_epub: str
    shared_pdf: str


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Library:
    folder = tmp_path_factory.mktemp("access")
    db = folder / "access.sqlite"
    store = SQLiteStore(db)
    try:
        settings = Settings(db=db)
        _add_users(store)
        ann = store.user("ann").id  # documents name their owner by the user's id
        ids = {}
        for name, path, owner in (
            ("private_pdf", ROBUSTNESS / "pdfminer-pagelabels.pdf", ann),
            ("private_epub", _tiny_epub(folder / "zebra.epub"), ann),
            ("shared_pdf", ROBUSTNESS / "pdfminer-jo.pdf", None),
        ):
            outcome = ingest_file(
                path,
                store,
                embedder,
                IngestOptions.from_settings(
                    settings, owner=owner, visibility="private" if owner else "shared"
                ),
            )
            assert outcome.status == "ingested", outcome
            assert outcome.doc_id is not None
            ids[name] = outcome.doc_id
    finally:
        store.close()
    return Library(db=db, **ids)


def _add_users(store: Any) -> None:
    accounts.add_user(store, "ann", PASSWORD)
    accounts.add_user(store, "bob", PASSWORD)
    accounts.add_user(store, "root", PASSWORD, admin=True)


@pytest.fixture(scope="module", params=("sqlite", "postgres"))
def settings(
    request: pytest.FixtureRequest, library: Library, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    folder = tmp_path_factory.mktemp(f"settings-{request.param}")
    auth = AuthSettings(secret_key_file=folder / "secret.key")
    # Users who are not admins ask in agent mode here (server.agent_mode keeps it for admins).
    server = ServerSettings(agent_mode="everyone", allowed_hosts=["testserver"])
    if request.param == "sqlite":
        yield Settings(db=library.db, auth=auth, server=server)
        return
    from tests.helpers.pg_server import copy_into_postgres, shared_server
    from truthbase.store.postgres import PostgresStore

    url = copy_into_postgres(library.db)  # documents and accounts, with the users' ids
    store = PostgresStore(url)
    try:
        assert {u.name for u in store.users()} == {"ann", "bob", "root"}
    finally:
        store.close()
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


def _concrete(path: str) -> str:
    """A route path with its parameters filled (an id that exists nowhere, unit 0)."""
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: "0" if m.group(1) == "unit" else "0" * 64, path)


def test_every_api_route_answers_401_without_a_login(client: TestClient) -> None:
    routes = [r for r in served_routes(client.app.routes) if isinstance(r, APIRoute)]  # type: ignore[attr-defined]
    checked = 0
    for route in routes:
        if not route.path.startswith("/api/"):
            continue
        for method in route.methods:
            response = client.request(method, _concrete(route.path))
            assert response.status_code == 401, (method, route.path, response.status_code)
            assert response.headers["www-authenticate"].startswith("Bearer")
            checked += 1
    assert checked >= 10  # the documents, search, spans, chat, EPUB, me and admin routes
    assert client.get("/openapi.json").status_code == 401
    for page in ("/", "/view", "/read", "/admin", "/docs"):
        response = client.get(page, follow_redirects=False)
        assert response.status_code == 303, page
        assert response.headers["location"].startswith("/login?next=")
    assert client.get("/login").status_code == 200
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["documents"] is None


def test_a_second_user_gets_404_for_the_first_users_private_documents(
    client: TestClient, library: Library
) -> None:
    ann, bob = login(client, "ann"), login(client, "bob")
    listed = {d["id"] for d in client.get("/api/documents", headers=bob).json()}
    assert listed == {library.shared_pdf}
    owned = {d["id"]: d for d in client.get("/api/documents", headers=ann).json()}
    assert set(owned) == {library.shared_pdf, library.private_pdf, library.private_epub}
    assert owned[library.private_pdf]["visibility"] == "private"
    assert owned[library.private_pdf]["owner"] == "ann"
    assert client.get("/healthz", headers=bob).json()["documents"] == 1

    missing = "f" * 64
    for doc, other in ((library.private_pdf, missing), (library.private_epub, missing)):
        for path in (
            "/api/documents/{}/file",
            "/api/spans?doc={}&page=1&start=0&end=1",
            "/api/epub/sections/{}/0",
            "/api/epub/sections/{}/0/xhtml",
            "/api/epub/spans?doc={}&unit=0&start=0&end=1",
            "/api/epub/images/{}?member=OEBPS/x.png",
        ):
            hidden = client.get(path.format(doc), headers=bob)
            absent = client.get(path.format(other), headers=bob)
            assert hidden.status_code == 404, (path, hidden.status_code)
            # a hidden document reads exactly as one that does not exist
            assert hidden.json()["detail"] == absent.json()["detail"].replace(other, doc)
    assert client.get(f"/api/documents/{library.private_pdf}/file", headers=ann).status_code == 200
    assert (
        client.get(f"/api/epub/sections/{library.private_epub}/0", headers=ann).status_code == 200
    )
    span = f"/api/epub/spans?doc={library.private_epub}&unit=0&start=0&end=5"
    assert client.get(span, headers=ann).status_code == 200
    pdf_span = f"/api/spans?doc={library.private_pdf}&page=1&start=0&end=1"
    assert client.get(pdf_span, headers=ann).status_code == 200

    private = {library.private_pdf, library.private_epub}
    found = client.get("/api/search", params={"q": SECRET_QUESTION, "k": 20}, headers=ann).json()
    assert found["results"][0]["doc_id"] == library.private_epub
    seen = client.get("/api/search", params={"q": SECRET_QUESTION, "k": 20}, headers=bob).json()
    assert seen["results"] and not {r["doc_id"] for r in seen["results"]} & private

    for mode in ("auto", "agent"):
        # A hidden document as the chat's doc is not found, exactly as one that does not exist.
        hidden = {"question": SECRET_QUESTION, "mode": mode, "doc": library.private_epub}
        refused = client.post("/api/chat", json=hidden, headers=bob)
        absent = client.post("/api/chat", json={**hidden, "doc": "f" * 64}, headers=bob)
        assert refused.status_code == absent.status_code == 404
        assert refused.json()["detail"] == absent.json()["detail"].replace("f" * 64, hidden["doc"])
    for body in (
        {"question": SECRET_QUESTION},
        {"question": SECRET_QUESTION, "mode": "agent"},
    ):
        response = client.post("/api/chat", json=body, headers=bob)
        assert response.status_code == 200
        events = _sse(response.text)
        assert "error" not in [kind for kind, _ in events], events
        sources = [s for kind, data in events if kind == "sources" for s in data["sources"]]
        assert not {s["doc_id"] for s in sources} & private, body
        done = events[-1][1]["answer"]
        assert not {c["doc_id"] for c in done["citations"]} & private
    response = client.post("/api/chat", json={"question": SECRET_QUESTION}, headers=ann)
    sources = [
        s for kind, data in _sse(response.text) if kind == "sources" for s in data["sources"]
    ]
    assert library.private_epub in {s["doc_id"] for s in sources}


def test_an_admin_sees_every_document_and_the_usage(client: TestClient, library: Library) -> None:
    root, bob = login(client, "root"), login(client, "bob")
    assert len(client.get("/api/documents", headers=root).json()) == 3
    usage = client.get("/api/admin/usage", headers=root).json()
    assert {u["name"] for u in usage["users"]} == {"ann", "bob", "root"}
    ann_row = next(u for u in usage["users"] if u["name"] == "ann")
    assert ann_row["documents"] == 2 and ann_row["private_documents"] == 2
    assert client.get("/api/admin/usage", headers=bob).status_code == 403
    me = client.get("/api/me", headers=bob).json()
    assert me == {"user": "bob", "admin": False, "mode": "accounts"}


def test_tokens_work_and_revoked_tokens_stop(client: TestClient, settings: Settings) -> None:
    from truthbase.store import open_store

    store = open_store(settings)
    try:
        made = accounts.create_token(store, "bob", "ci")
        bearer = {"Authorization": f"Bearer {made.secret}"}
        assert client.get("/api/me", headers=bearer).json()["user"] == "bob"
        assert client.get("/api/documents", headers=bearer).status_code == 200
        kept = store.tokens(store.user("bob").id)
        assert made.record.id in [t.id for t in kept]  # (the copy into PostgreSQL has more)
        assert made.secret not in json.dumps([t.secret_hash for t in kept])
        wrong = {"Authorization": f"Bearer {made.secret[:-2]}xx"}
        assert client.get("/api/documents", headers=wrong).status_code == 401
        accounts.revoke_token(store, made.record.id)
        assert client.get("/api/documents", headers=bearer).status_code == 401
    finally:
        store.close()


def test_the_session_cookie_flags_expiry_and_logout(client: TestClient, settings: Settings) -> None:
    response = client.post("/login", json={"name": "ann", "password": PASSWORD})
    client.cookies.clear()
    header = response.headers["set-cookie"]
    flags = {part.strip().split("=")[0].lower() for part in header.split(";")}
    assert {"httponly", "path", "max-age", "samesite"} <= flags
    assert "samesite=strict" in header.lower() and "secure" not in flags  # plain http here
    assert f"max-age={settings.auth.session_lifetime_s}" in header.lower()
    cookie = response.cookies["truthbase_session"]
    session_id, _, signature = cookie.rpartition(".")
    assert session_id and signature
    signed = {"Cookie": f"truthbase_session={cookie}"}
    assert client.get("/api/me", headers=signed).json()["user"] == "ann"
    forged = {"Cookie": f"truthbase_session={session_id}.{'A' * len(signature)}"}
    assert client.get("/api/me", headers=forged).status_code == 401
    assert (
        client.post("/login", json={"name": "ann", "password": "wrong password"}).status_code == 401
    )
    assert client.post("/login", json={"name": "nobody", "password": PASSWORD}).status_code == 401
    out = client.post("/logout", headers={**signed, "Accept": "application/json"})
    assert out.status_code == 200 and "truthbase_session=" in out.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/api/me", headers=signed).status_code == 401  # ended server-side

    secure = settings.model_copy(
        update={
            "auth": AuthSettings(
                secret_key_file=settings.auth.secret_key_file, cookie_secure="always"
            )
        }
    )
    with TestClient(create_app(secure)) as other:
        header = other.post("/login", json={"name": "ann", "password": PASSWORD}).headers[
            "set-cookie"
        ]
    assert "secure" in {part.strip().lower() for part in header.split(";")}


def test_a_cross_site_post_is_refused(client: TestClient) -> None:
    bob = login(client, "bob")
    body = {"question": "What is this?"}
    foreign = client.post("/api/chat", json=body, headers={**bob, "Origin": "https://evil.example"})
    assert foreign.status_code == 403
    marked = client.post("/api/chat", json=body, headers={**bob, "Sec-Fetch-Site": "cross-site"})
    assert marked.status_code == 403
    refused = client.post(
        "/login",
        json={"name": "bob", "password": PASSWORD},
        headers={"Origin": "https://evil.example"},
    )
    assert refused.status_code == 403
    same = client.post("/api/chat", json=body, headers={**bob, "Origin": "http://testserver"})
    assert same.status_code == 200


def test_quotas_are_per_user(settings: Settings) -> None:
    limited = settings.model_copy(
        update={"quota": QuotaSettings(per_client_per_day=1, agent_per_day=0)}
    )
    with TestClient(create_app(limited)) as client:
        ann, bob = login(client, "ann"), login(client, "bob")
        question = {"question": "What is this document about?"}
        # agent mode: its own budget (0 here), refused before anything is counted
        agent = client.post("/api/chat", json={**question, "mode": "agent"}, headers=ann)
        assert agent.status_code == 429 and int(agent.headers["retry-after"]) >= 1
        assert client.post("/api/chat", json=question, headers=ann).status_code == 200
        assert client.post("/api/chat", json=question, headers=ann).status_code == 429
        assert client.post("/api/chat", json=question, headers=bob).status_code == 200
        root = login(client, "root")
        rows = {u["name"]: u for u in client.get("/api/admin/usage", headers=root).json()["users"]}
    assert rows["ann"]["chats_today"] == 1 and rows["bob"]["chats_today"] == 1


def test_without_users_on_loopback_the_local_user_sees_everything(
    tmp_path: Path, library: Library
) -> None:
    db = tmp_path / "local.sqlite"
    db.write_bytes(library.db.read_bytes())
    store = SQLiteStore(db)
    try:
        for name in ("ann", "bob", "root"):
            store.remove_user(name)
    finally:
        store.close()
    settings = Settings(db=db, auth=AuthSettings(secret_key_file=tmp_path / "k"))
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/me").json() == {"user": None, "admin": True, "mode": "local"}
        assert len(client.get("/api/documents").json()) == 3
        assert client.get(f"/api/documents/{library.private_pdf}/file").status_code == 200
    exposed = settings.model_copy(update={"server": ServerSettings(host="0.0.0.0")})
    with TestClient(create_app(exposed)) as client:
        assert client.get("/api/documents").status_code == 401  # not loopback: a login, always
    result = CliRunner().invoke(cli, ["--db", str(db), "serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2
    assert "truthbase users add" in result.output
