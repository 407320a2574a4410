"""The HTTP-level hardening of the server (issue 17, item 1), each finding tried as a hostile
client would, over a copy of the seed index: a real uvicorn server on 127.0.0.1 where the
transport matters (body sizes, disconnects, concurrency), Starlette's TestClient elsewhere.

A scripted OpenAI-compatible server (tests/helpers/transcripts.py) plays the model and counts
the requests it gets."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.helpers.indexes import copy_db
from tests.helpers.transcripts import Reply, Scripted, scripted_server, tool_reply
from truthbase import accounts
from truthbase.config import (
    AgentSettings,
    AuthSettings,
    LLMSettings,
    QuotaSettings,
    SegmentSettings,
    ServerSettings,
    Settings,
    UploadSettings,
)
from truthbase.segments.tools import RELATED_SEGMENTS
from truthbase.server import create_app, default_web_dir
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

PAGES = ("/", "/view", "/library", "/login", "/admin", "/read", "/docs")


@pytest.fixture(scope="module")
def db(seed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_db(seed_db, tmp_path_factory.mktemp("hardening") / "seed.sqlite")


@pytest.fixture(scope="module")
def small_doc(db: Path) -> str:
    """The seed document with the fewest chunks: agent mode reads only it (its segment index,
    built on first use, is the cheapest)."""
    store = SQLiteStore(db)
    try:
        return min(store.list_documents(), key=lambda d: d.chunk_count).id
    finally:
        store.close()


@pytest.fixture(scope="module")
def users_db(seed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A copy with a user (ann) and an admin (root); their API tokens."""
    path = copy_db(seed_db, tmp_path_factory.mktemp("hardening-users") / "seed.sqlite")
    store = SQLiteStore(path)
    try:
        accounts.add_user(store, "ann", "correct horse battery")
        accounts.add_user(store, "root", "correct horse battery", admin=True)
        ann = accounts.create_token(store, "ann").secret
        root = accounts.create_token(store, "root").secret
    finally:
        store.close()
    return path, ann, root


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


class Live:
    """The app of ``settings`` served by uvicorn in a thread on 127.0.0.1 (a free port)."""

    def __init__(self, settings: Settings) -> None:
        import uvicorn

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(settings), host="127.0.0.1", port=self.port, log_level="warning", ws="none"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Live:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "no server"
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def _agent_settings(db: Path, model: Scripted, quota: QuotaSettings, **server: Any) -> Settings:
    """Agent mode against the scripted model; segments summarized without it, so every model
    request the server makes is one of the agent's (its loop or its segment selection)."""
    return Settings(
        quota=quota,
        db=db,
        llm=LLMSettings(base_url=model.base_url, model="scripted", rewrite_enabled=False),
        segments=SegmentSettings(summarizer="extractive"),
        agent=AgentSettings(max_steps=8, timeout_s=10, total_timeout_s=60),
        server=ServerSettings(**server),
    )


def _wait_for(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# -- body size ---------------------------------------------------------------------------------


def test_a_40_mib_body_is_413_without_being_parsed_or_echoed(db: Path) -> None:
    huge = json.dumps({"question": "a" * (40 << 20)}).encode()
    with Live(Settings(db=db)) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        began = time.perf_counter()
        response = client.post("/api/chat", content=huge, headers={"Content-Type": "text/json"})
        assert response.status_code == 413
        assert "too large" in response.json()["detail"]
        assert len(response.content) < 1000  # nothing of the body comes back
        assert time.perf_counter() - began < 10

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
            yield b'{"question": "'
            for _ in range(40):
                yield b"a" * (1 << 20)
            yield b'"}'

        response = client.post("/api/chat", content=chunks())
        assert response.status_code == 413 and len(response.content) < 1000
        # Uploads keep their own limit (library.max_file_bytes): 2 MiB of not-a-PDF is a job.
        files = {"file": ("big.pdf", b"x" * (2 << 20), "application/pdf")}
        assert client.post("/api/documents", files=files).status_code == 202


def _stall(url: str, head: str, sent: bytes) -> tuple[bytes, float]:
    """Send ``head`` (a request line and headers that declare more body than ``sent``) and
    ``sent``, then nothing: the server's whole reply, and the seconds until it closed."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        began = time.perf_counter()
        sock.sendall(head.encode() + sent)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
        return reply, time.perf_counter() - began


def test_a_stalled_body_is_408_and_its_connection_closed(db: Path, tmp_path: Path) -> None:
    """A client that declares a body and stops sending held its connection for ever (uvicorn
    has no body timeout): now ``server.body_idle_timeout_s`` of silence is a 408, an upload's
    part received so far is not kept, and a body that keeps moving is read whole."""
    data = tmp_path / "data"
    settings = Settings(
        db=db,
        library=UploadSettings(data_dir=data),
        server=ServerSettings(body_idle_timeout_s=1.0),
    )
    with Live(settings) as live:
        chat = (
            "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        )
        reply, seconds = _stall(live.url, chat, b'{"question": "wh')
        assert reply.startswith(b"HTTP/1.1 408"), reply
        assert b"stalled" in reply and seconds < 20
        boundary = "b0undary"
        upload = (
            "POST /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
            "Content-Length: 100000\r\n\r\n"
        )
        part = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
            "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
        ).encode()
        reply, seconds = _stall(live.url, upload, part + b"x" * 5000)
        assert reply.startswith(b"HTTP/1.1 408"), reply
        incoming = data / "uploads" / ".incoming"
        assert incoming.is_dir() and not any(incoming.iterdir()), list(incoming.iterdir())

        def slow() -> Iterator[bytes]:  # every chunk inside the timeout: read whole
            for piece in (b'{"question": ', b'"Who wrote ', b'RAPTOR?"}'):
                time.sleep(0.4)
                yield piece

        with httpx.Client(base_url=live.url, timeout=60) as client:
            response = client.post(
                "/api/search", content=slow(), headers={"Content-Type": "application/json"}
            )
        assert response.status_code != 408, response.text


# -- Host check, headers on pages, docs --------------------------------------------------------


def test_a_foreign_host_is_400(db: Path) -> None:
    settings = Settings(db=db, server=ServerSettings())  # the real default, not the tests'
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        assert client.get("/healthz").status_code == 200
        for host in ("localhost:8000", "[::1]:8000", "127.0.0.1"):
            assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""):
            response = client.get("/api/documents", headers={"Host": host})
            assert response.status_code == 400, host
    listed = Settings(db=db, server=ServerSettings(allowed_hosts=["docs.example.org"]))
    with TestClient(create_app(listed), base_url="http://docs.example.org") as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/healthz", headers={"Host": "localhost"}).status_code == 400


def test_every_page_has_csp_frame_ancestors_nosniff_and_referrer_policy(db: Path) -> None:
    with TestClient(create_app(Settings(db=db))) as client:
        for path in PAGES:
            response = client.get(path, follow_redirects=False)
            assert response.status_code in (200, 303, 307), (path, response.status_code)
            headers = response.headers
            assert headers["x-content-type-options"] == "nosniff", path
            assert headers["referrer-policy"], path
            if headers.get("content-type", "").startswith("text/html"):
                csp = headers["content-security-policy"]
                assert "frame-ancestors 'none'" in csp, (path, csp)
                assert "script-src 'self'" in csp or "default-src 'self'" in csp, (path, csp)
        api = client.get("/api/documents")
        assert api.headers["x-content-type-options"] == "nosniff"


def test_docs_load_no_script_from_another_origin(db: Path) -> None:
    with TestClient(create_app(Settings(db=db))) as client:
        page = client.get("/docs")
        assert page.status_code == 200
        assert "cdn" not in page.text.lower() and "https://" not in page.text
        assert "swagger-ui-bundle.js" in page.text
        bundle = client.get("/swagger-ui/swagger-ui-bundle.js")
        assert bundle.status_code == 200 and len(bundle.content) > 100_000
        assert client.get("/redoc").status_code == 404  # one docs page, served here
        assert client.get("/openapi.json").status_code == 200


def test_the_chat_page_does_not_ask_on_load() -> None:
    """/?q= only fills the question in: the page's script never posts on load."""
    script = (default_web_dir() / "js" / "chat.js").read_text("utf-8")
    tail = script[script.index('get("q")') :]
    assert "ask(initial)" not in tail and "input.value = initial" in tail


# -- question checks ---------------------------------------------------------------------------


def test_questions_the_server_cannot_answer_are_refused_before_the_stream(db: Path) -> None:
    with TestClient(create_app(Settings(db=db))) as client:
        for blank in (" ", "\n\t  ", "\u3000"):
            response = client.post("/api/chat", json={"question": blank})
            assert response.status_code == 422, repr(blank)
            assert "empty" in json.dumps(response.json()["detail"])
        response = client.post("/api/chat", json={"question": "x" * 2001})
        assert response.status_code == 422
        assert "2000" in json.dumps(response.json()["detail"])
        response = client.post("/api/chat", json={"question": "What is GV.OC?", "mode": "llm"})
        assert response.status_code == 400  # not 200 and an error event
        assert "llm" in response.json()["detail"].lower()


# -- quotas ------------------------------------------------------------------------------------


def test_search_is_metered_and_a_forged_forwarded_for_does_not_reset_it(db: Path) -> None:
    quota = QuotaSettings(search_per_client_per_minute=2)
    with TestClient(create_app(Settings(db=db, quota=quota))) as client:
        codes = [
            client.get(
                "/api/search",
                params={"q": "trustworthy AI", "k": 1},
                headers={"X-Forwarded-For": f"203.0.113.{i}"},
            )
            for i in range(4)
        ]
        assert [r.status_code for r in codes] == [200, 200, 429, 429]
        assert int(codes[2].headers["retry-after"]) >= 1
    # Through a configured proxy the header names the client: each its own budget.
    trusted = Settings(db=db, quota=quota, auth=AuthSettings(trusted_proxies=["testclient"]))
    with TestClient(create_app(trusted)) as client:
        for i in range(4):
            response = client.get(
                "/api/search",
                params={"q": "trustworthy AI", "k": 1},
                headers={"X-Forwarded-For": f"198.51.100.7, 203.0.113.{i}"},
            )
            assert response.status_code == 200


def test_quotas_are_per_user_when_signed_in(users_db: tuple[Path, str, str]) -> None:
    path, ann, root = users_db
    quota = QuotaSettings(search_per_client_per_minute=1)
    with TestClient(create_app(Settings(db=path, quota=quota))) as client:
        params = {"q": "trustworthy AI", "k": 1}
        assert client.get("/api/search", params=params, headers=_bearer(ann)).status_code == 200
        # Another address is still ann: refused; root has a budget of their own.
        forged = {**_bearer(ann), "X-Forwarded-For": "192.0.2.1"}
        assert client.get("/api/search", params=params, headers=forged).status_code == 429
        assert client.get("/api/search", params=params, headers=_bearer(root)).status_code == 200


def test_agent_mode_is_for_admins_unless_opened_to_everyone(
    users_db: tuple[Path, str, str],
) -> None:
    path, ann, _ = users_db
    question = {"question": "What is GV.OC?", "mode": "agent"}
    with TestClient(create_app(Settings(db=path))) as client:
        response = client.post("/api/chat", json=question, headers=_bearer(ann))
        assert response.status_code == 403 and "agent" in response.json()["detail"]
    everyone = Settings(
        db=path,
        server=ServerSettings(agent_mode="everyone", allowed_hosts=["testserver"]),
        quota=QuotaSettings(agent_per_day=0),
    )
    with TestClient(create_app(everyone)) as client:
        # Past the mode check; refused by the agent quota (so nothing runs here).
        response = client.post("/api/chat", json=question, headers=_bearer(ann))
        assert response.status_code == 429


# -- concurrency and disconnects (a real server) -----------------------------------------------


def _slow_tool_turns(model: Scripted, n: int, delay_s: float) -> None:
    for i in range(n):
        reply = tool_reply((RELATED_SEGMENTS, {"question": f"control {i}"}))
        reply.delay_s = delay_s
        model.say(reply)


#: "At once" for a refused chat: far under the 15 s the first chat holds its slot.
AT_ONCE = 2.0


def test_chats_beyond_the_process_limits_get_503_with_retry_after_at_once(
    db: Path, small_doc: str
) -> None:
    with scripted_server() as model:
        _slow_tool_turns(model, 30, 0.5)
        # Two chats a day: a third that gets a slot is refused by the quota (429), so a 429
        # rather than a 503 says the slots are free again, without answering anything.
        quota = QuotaSettings(per_client_per_day=2)
        settings = _agent_settings(db, model, quota, max_concurrent_chats=2, max_concurrent_agent=1)
        with Live(settings) as live, httpx.Client(base_url=live.url, timeout=60) as client:
            agent = {"question": "What is GV.OC?", "mode": "agent", "doc": small_doc}
            with client.stream("POST", "/api/chat", json=agent) as first:
                assert first.status_code == 200
                _wait_for(lambda: len(model.requests) >= 1)  # the agent holds its slots
                began = time.perf_counter()
                refused = client.post("/api/chat", json=agent)
                # At once: not after the slot frees (the agent holds it for 30 turns of 0.5 s);
                # 2 s, not less, since a loaded CI machine takes that long for a round trip.
                assert time.perf_counter() - began < AT_ONCE
                assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
                extractive = {"question": "What is GV.OC?", "mode": "extractive"}
                with client.stream("POST", "/api/chat", json=extractive) as second:
                    assert second.status_code == 200  # the second chat slot
                    began = time.perf_counter()
                    third = client.post("/api/chat", json=extractive)
                    assert time.perf_counter() - began < AT_ONCE
                    assert third.status_code == 503 and "retry-after" in third.headers
            # Both slots come back when the streams end (the quota refuses what comes next).
            _wait_for(lambda: client.post("/api/chat", json=extractive).status_code == 429)
            _wait_for(lambda: client.post("/api/chat", json=agent).status_code == 429)


def test_a_client_that_goes_away_stops_the_agents_model_calls(db: Path, small_doc: str) -> None:
    with scripted_server() as model:
        _slow_tool_turns(model, 30, 0.4)
        # One agent chat a day: once the slot is free, the next is refused by the quota (429).
        quota = QuotaSettings(agent_per_day=1)
        settings = _agent_settings(db, model, quota, max_concurrent_agent=1)
        with Live(settings) as live:
            agent = {"question": "What is GV.OC?", "mode": "agent", "doc": small_doc}
            body = json.dumps(agent).encode()
            with socket.create_connection(("127.0.0.1", live.port)) as sock:
                sock.sendall(
                    b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Content-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                _wait_for(lambda: len(model.requests) >= 2)
            gone_at = len(model.requests)
            time.sleep(2.5)  # six more turns' worth of scripted delay
            assert len(model.requests) <= gone_at + 1, (gone_at, len(model.requests))
            # The agent slot is free again once the cancelled answer has stopped.
            with httpx.Client(base_url=live.url, timeout=60) as client:
                _wait_for(lambda: client.post("/api/chat", json=agent).status_code == 429, 10)


# -- what non-admins see of the model ----------------------------------------------------------


def test_model_urls_and_provider_errors_reach_admins_only(users_db: tuple[Path, str, str]) -> None:
    path, ann, root = users_db
    secret = "upstream-provider-detail-XYZZY"
    with scripted_server() as model:
        port = model.base_url.split(":")[2].split("/")[0]
        settings = Settings(
            db=path,
            llm=LLMSettings(
                base_url=model.base_url,
                model="scripted",
                rewrite_enabled=False,
                rerank_enabled=False,
                stream=False,
            ),
        )
        with TestClient(create_app(settings)) as client:
            seen: dict[str, str] = {}
            for who, token in (("ann", ann), ("root", root)):
                model.replies.clear()
                model.say(*[Reply(500, {"error": {"message": secret}}) for _ in range(4)])
                response = client.post(
                    "/api/chat",
                    json={"question": "What is GV.OC?", "mode": "llm"},
                    headers=_bearer(token),
                )
                assert response.status_code == 200
                seen[who] = response.text
    assert secret in seen["root"] or port in seen["root"], seen["root"][-2000:]
    assert secret not in seen["ann"] and f":{port}" not in seen["ann"], seen["ann"][-2000:]
    assert "event: done" in seen["ann"] or "event: error" in seen["ann"]
