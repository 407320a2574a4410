"""The HTTP API over the seed index, in process (Starlette's TestClient), and `truthbase serve`."""

from __future__ import annotations

import json
import logging
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.helpers.routes import served_routes
from truthbase.app import service as app_service
from truthbase.config import EmbedderSettings, Settings
from truthbase.geometry import span_line_rects
from truthbase.server import ROUTES, create_app
from truthbase.store import SQLiteStore

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(seed_db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db=seed_db))) as c:
        yield c


def _doc_ids(client: TestClient) -> list[str]:
    return [d["id"] for d in client.get("/api/documents").json()]


def test_health_and_documents(client: TestClient) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["documents"] == 4
    docs = client.get("/api/documents").json()
    assert {d["kind"] for d in docs} == {"pdf"}
    assert {d["language"] for d in docs} == {"en"}
    assert all(d["file_url"] == f"/api/documents/{d['id']}/file" for d in docs)


def test_document_file_by_id_only(client: TestClient) -> None:
    doc = _doc_ids(client)[0]
    response = client.get(f"/api/documents/{doc}/file")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["x-truthbase-matches-index"] == "true"
    assert response.content.startswith(b"%PDF")
    assert client.get(f"/api/documents/{'0' * 64}/file").status_code == 404
    for bad in ("..%2F..%2Fetc%2Fpasswd", "etc/passwd", doc[:12], doc.upper()):
        assert client.get(f"/api/documents/{bad}/file").status_code in (404, 422), bad


def test_search_returns_chunks_with_rects(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "Which function did CSF 2.0 add?", "k": 3}).json()
    assert len(body["results"]) == 3
    first = body["results"][0]
    assert first["rank"] == 1 and first["page"] == first["unit"] + 1
    assert first["rects"] and all(len(r) == 4 for r in first["rects"])
    assert client.get("/api/search", params={"q": ""}).status_code == 422
    assert client.get("/api/search", params={"q": "x", "k": 0}).status_code == 422


def test_spans_are_the_stored_boxes_line_rects(client: TestClient, seed_db: Path) -> None:
    hit = client.get("/api/search", params={"q": "trustworthy AI", "k": 1}).json()["results"][0]
    params = {"doc": hit["doc_id"], "page": hit["page"], "start": hit["start"], "end": hit["end"]}
    span = client.get("/api/spans", params=params).json()
    store = SQLiteStore(seed_db)
    try:
        unit = store.unit(hit["doc_id"], hit["unit"])
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None
    expected = span_line_rects(unit.text, unit.boxes, hit["start"], hit["end"])
    assert [tuple(r) for r in span["rects"]] == expected
    # Stored chunk rects are rounded to 0.001 pt.
    assert len(hit["rects"]) == len(expected)
    for stored, exact in zip(hit["rects"], expected, strict=True):
        assert stored == pytest.approx(exact, abs=1e-3)
    assert span["text"] == unit.text[hit["start"] : hit["end"]]
    assert span["page_text"] == unit.text
    assert span["geometry"]["rotation"] == unit.geometry.rotation
    assert tuple(span["geometry"]["mediabox"]) == unit.geometry.mediabox
    bad = {**params, "end": len(unit.text) + 1}
    assert client.get("/api/spans", params=bad).status_code == 422
    assert client.get("/api/spans", params={**params, "page": 9999}).status_code == 404


def _sse(text: str) -> list[tuple[str, dict[str, object]]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_chat_streams_sources_tokens_citations_done(client: TestClient) -> None:
    question = "Who is the primary audience the CSF is written for?"
    with client.stream("POST", "/api/chat", json={"question": question}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _sse(response.read().decode())
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds[-1] == "done", kinds
    assert "error" not in kinds
    assert kinds.index("citations") == len(kinds) - 2
    assert all(kind == "token" for kind in kinds[1:-2])
    assert all(data["type"] == kind for kind, data in events)
    answer = events[-1][1]["answer"]
    assert isinstance(answer, dict)
    if not answer["refused"]:
        assert re.search(r"\[\d+\]", str(answer["text"]))
        assert any(c["verified"] and c["rects"] for c in answer["citations"])  # type: ignore[index]


def test_chat_rejects_an_empty_question(client: TestClient) -> None:
    assert client.post("/api/chat", json={"question": ""}).status_code == 422
    assert client.post("/api/chat", json={}).status_code == 422


def test_openapi_and_pages(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in ("/api/documents", "/api/search", "/api/spans", "/api/chat", "/healthz"):
        assert route in paths
    assert client.get("/docs").status_code == 200
    index = client.get("/")
    assert index.status_code == 200 and "/js/chat.js" in index.text
    assert "/js/view-page.js" in client.get("/view").text
    module = client.get("/pdfjs/build/pdf.mjs")
    assert module.status_code == 200, "run scripts/install-web.sh"
    assert "javascript" in module.headers["content-type"]


def test_every_route_is_in_the_guide(client: TestClient) -> None:
    guide = (REPO / "docs" / "web-app.md").read_text("utf-8")
    for route in ROUTES:
        assert f"`{route}" in guide, f"{route} is not in docs/web-app.md's route table"
    served = {
        f"{method} {route.path}"  # type: ignore[attr-defined]
        for route in served_routes(client.app.routes)  # type: ignore[attr-defined]
        for method in getattr(route, "methods", None) or ()
        if method != "HEAD" and not route.path.startswith(("/openapi", "/docs/", "/redoc"))  # type: ignore[attr-defined]
    }
    assert served <= set(ROUTES) | {"GET /pdfjs/{rest:path}"}, served - set(ROUTES)
    assert {"GET /api/documents", "POST /api/chat", "DELETE /api/documents/{doc_id}"} <= served


def test_serve_prints_the_url_and_serves(seed_db: Path) -> None:
    command = [sys.executable, "-m", "truthbase.cli", "--db", str(seed_db), "serve", "--port", "0"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            match = re.search(r"http://[\w.]+:(\d+)/", line)
            assert match, line
            url = f"http://127.0.0.1:{match.group(1)}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    response = httpx.get(f"{url}/healthz", timeout=2)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the server did not answer"
                    time.sleep(0.2)
            assert response.json()["documents"] == 4
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_serve_refuses_a_missing_index(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "truthbase.cli", "--db", str(tmp_path / "no.sqlite"), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "no index" in result.stderr


# Errors: a TruthBaseError is a 4xx (503: a backend) with its message as `detail`; anything
# else is a logged 500 whose body says only "internal error".


def test_a_user_error_is_a_4xx_with_its_message(seed_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "other.sqlite"
    shutil.copy(seed_db, copy)
    with sqlite3.connect(copy) as connection:
        connection.execute("UPDATE meta SET value='some-other-model' WHERE key='embedder'")
    connection.close()
    with TestClient(create_app(Settings(db=copy))) as other:
        response = other.get("/api/search", params={"q": "anything"})
    assert response.status_code == 400  # EmbedderMismatchError, an InvalidInput
    assert "re-ingest" in response.json()["detail"] or "re-index" in response.json()["detail"]


def test_an_unavailable_backend_is_a_503(seed_db: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-model"
    settings = Settings(db=seed_db, embedder=EmbedderSettings(name=f"onnx:{missing}"))
    with TestClient(create_app(settings)) as broken:
        response = broken.get("/api/search", params={"q": "anything"})
        assert broken.get("/healthz").status_code == 200  # the rest of the app still serves
    assert response.status_code == 503  # EmbeddingError, Unavailable
    assert str(missing) in response.json()["detail"]


def test_a_bug_is_a_logged_500_without_its_traceback(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: object) -> object:
        raise RuntimeError("secret detail of a bug")

    monkeypatch.setattr(SQLiteStore, "list_documents", broken)
    with caplog.at_level(logging.ERROR, logger="truthbase.server"):
        response = client.get("/api/documents")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal error"}
    assert "secret" not in response.text and "Traceback" not in response.text
    logged = [r for r in caplog.records if r.exc_info and r.name.startswith("truthbase.server")]
    assert len(logged) == 1 and "GET /api/documents" in logged[0].getMessage()
    assert "RuntimeError: secret detail of a bug" in caplog.text  # the traceback is in the log


def test_a_bug_in_the_chat_stream_is_logged_and_shown_as_internal_error(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> Iterator[object]:
        raise KeyError("secret detail of a bug")
        yield  # a generator, as answer_events

    monkeypatch.setattr(app_service, "answer_events", broken)
    with caplog.at_level(logging.ERROR, logger="truthbase.server"):
        response = client.post("/api/chat", json={"question": "anything"})
    assert response.status_code == 200  # the stream had started
    assert _sse(response.text) == [
        ("error", {"type": "error", "stage": "answer", "message": "internal error"})
    ]
    assert "KeyError: 'secret detail of a bug'" in caplog.text
