"""scripts/fetch_seed.py (make demo without a corpus) against a local server standing in for the
publishers: download, verification, the cache, and the failures it reports."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.corpus import REPO, SEED

SCRIPT = REPO / "scripts" / "fetch_seed.py"
CSF = "/nistpubs/CSWP/NIST.CSWP.29.pdf"
AI_RMF = "/nistpubs/ai/NIST.AI.100-1.pdf"
RAPTOR = "/pdf/2401.18059v1"
SELF_RAG = "/pdf/2310.11511v1"
ALL_FOUR = {
    CSF: "nist-csf-2.0.pdf",
    AI_RMF: "nist-ai-rmf-1.0.pdf",
    RAPTOR: "raptor.pdf",
    SELF_RAG: "self-rag.pdf",
}

pytestmark = [pytest.mark.timeout(120), pytest.mark.corpus]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_seed", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fetch_seed"] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


fetch_seed = _load()

# What the server does for a path: (status, headers, body); a callable writes the reply itself.
Route = tuple[int, dict[str, str], bytes] | Callable[[BaseHTTPRequestHandler], None]


class Publisher:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        routes, requests = self.routes, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                route = routes.get(self.path, (404, {}, b"not here"))
                if callable(route):
                    route(self)
                    return
                status, headers, body = route
                self.send_response(status)
                for key, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve_seed(self, path: str) -> None:
        body = (SEED / ALL_FOUR[path]).read_bytes()
        self.routes[path] = (200, {"Content-Type": "application/pdf"}, body)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def publisher() -> Iterator[Publisher]:
    p = Publisher()
    try:
        yield p
    finally:
        p.close()


def run(
    capsys: pytest.CaptureFixture[str], cache: Path, base_url: str
) -> tuple[int, list[str], str]:
    rc = fetch_seed.main(["--cache-dir", str(cache), "--base-url", base_url, "--timeout", "5"])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


def test_downloads_verifies_and_caches(
    publisher: Publisher, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in ALL_FOUR:
        publisher.serve_seed(path)
    cache = tmp_path / "cache" / "seed"
    rc, files, err = run(capsys, cache, publisher.url)
    assert rc == 0, err
    assert files == [str(cache / name) for name in ALL_FOUR.values()]
    assert sorted(publisher.requests) == sorted(ALL_FOUR)
    for name in ALL_FOUR.values():
        assert (cache / name).read_bytes() == (SEED / name).read_bytes()
    assert f"downloading {publisher.url}{CSF}" in err
    assert f"into {cache / 'nist-csf-2.0.pdf'}" in err
    assert err.count("(same as the corpus copy)") == 4
    assert sorted(p.name for p in cache.iterdir()) == sorted([*ALL_FOUR.values(), "sources.json"])
    sources = json.loads((cache / "sources.json").read_text("utf-8"))
    assert sources["raptor.pdf"]["url"] == publisher.url + RAPTOR
    assert sources["raptor.pdf"]["same_as_corpus"] is True

    publisher.requests.clear()
    rc, again, err = run(capsys, cache, publisher.url)
    assert rc == 0, err
    assert again == files
    assert publisher.requests == []  # all four from the cache
    assert err.count(": in the cache, ") == 4


def _truncated(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    handler.wfile.write(b"%PDF-1.5\n" + b"x" * 1000)
    handler.wfile.flush()
    handler.close_connection = True


def test_reports_each_failure_and_goes_on_with_the_rest(
    publisher: Publisher, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    publisher.serve_seed(CSF)
    # AI_RMF: 404. RAPTOR: a captive portal's HTML page. SELF_RAG: the connection drops mid-file.
    publisher.routes[RAPTOR] = (200, {"Content-Type": "text/html"}, b"<html>log in</html>")
    publisher.routes[SELF_RAG] = _truncated
    cache = tmp_path / "seed"
    cache.mkdir()
    (cache / "raptor.pdf").write_bytes(b"")  # a broken cached file is fetched again
    rc, files, err = run(capsys, cache, publisher.url)
    assert rc == 0, err
    assert files == [str(cache / "nist-csf-2.0.pdf")]
    assert f"FAILED: {publisher.url}{AI_RMF}: HTTP 404" in err
    assert f"FAILED: {publisher.url}{RAPTOR}: not a PDF" in err
    assert f"FAILED: {publisher.url}{SELF_RAG}: " in err
    assert "in the cache but unusable (empty file)" in err
    assert "missing 3 of 4; the demo goes on with 1" in err
    assert sorted(p.name for p in cache.iterdir()) == ["nist-csf-2.0.pdf", "sources.json"]


def test_nothing_fetched_exits_non_zero_with_a_clear_sentence(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    cache = tmp_path / "seed"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--cache-dir", str(cache), "--base-url", base],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert f"FAILED: {base}{CSF}: " in result.stderr
    assert "Connection refused" in result.stderr
    assert "could not download any of the 4 seed documents" in result.stderr
    assert "make demo CORPUS=path/to/pdfs" in result.stderr
    assert list(cache.iterdir()) == []
