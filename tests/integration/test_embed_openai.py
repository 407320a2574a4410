"""OpenAIEmbedder against a scripted OpenAI-compatible server on 127.0.0.1 (a real HTTP server in
a thread, standing in for Ollama, vLLM or OpenAI, the one external we cannot run here)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from truthbase.config import EmbedderSettings
from truthbase.embed import Embedder, EmbeddingError, OpenAIEmbedder, load_embedder

Reply = tuple[int, dict[str, Any]]


def _vector(text: str) -> list[float]:
    # Deliberately not normalized: the embedder must normalize.
    return [float(len(text)), 2.0, -1.0, 0.5]


def embeddings_ok(body: dict[str, Any]) -> Reply:
    data = [
        {"object": "embedding", "index": i, "embedding": _vector(text)}
        for i, text in enumerate(body["input"])
    ]
    data.reverse()  # servers may answer out of order; "index" is what counts
    return 200, {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


@dataclass
class FakeServer:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    reply: Callable[[dict[str, Any]], Reply] = embeddings_ok


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    fake = FakeServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            status, payload = fake.reply(body)
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(raw)  # the client may have given up (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _embedder(server: FakeServer, **kwargs: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"api_key": "sk-local", "batch_size": 2, "max_retries": 0}
    options.update(kwargs)
    return OpenAIEmbedder("nomic-embed-text", base_url=server.base_url, **options)


def test_request_shape_batching_and_normalization(server: FakeServer) -> None:
    embedder: Embedder = _embedder(server)
    texts = ["a", "bbb", "cc", "dddd", "e"]
    vectors = embedder.embed(texts)

    assert [r["path"] for r in server.requests] == ["/v1/embeddings"] * 3
    assert [r["body"]["input"] for r in server.requests] == [["a", "bbb"], ["cc", "dddd"], ["e"]]
    for request in server.requests:
        assert request["body"]["model"] == "nomic-embed-text"
        assert request["body"]["encoding_format"] == "float"  # Ollama has no base64
        assert request["auth"] == "Bearer sk-local"

    assert embedder.dim == 4 and embedder.model_id == "openai:nomic-embed-text"
    assert vectors.shape == (5, 4) and vectors.dtype == np.float32
    expected = np.array([_vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)  # rows in input order, unit norm


def test_dim_is_discovered_with_one_probe_when_asked_first(server: FakeServer) -> None:
    embedder = _embedder(server)
    assert embedder.embed([]).shape == (0, 4)
    assert len(server.requests) == 1
    assert embedder.dim == 4
    assert len(server.requests) == 1


def test_given_dim_is_enforced(server: FakeServer) -> None:
    embedder = _embedder(server, dim=768)
    assert embedder.dim == 768 and not server.requests
    with pytest.raises(EmbeddingError, match="expected 768 dimensions, got 4"):
        embedder.embed(["x"])


def test_http_error_surfaces_as_embedding_error(server: FakeServer) -> None:
    server.reply = lambda body: (
        404,
        {"error": {"message": f"model '{body['model']}' not found, try pulling it first"}},
    )
    with pytest.raises(EmbeddingError) as info:
        _embedder(server).embed(["x"])
    message = str(info.value)
    assert "HTTP 404" in message
    assert "model 'nomic-embed-text' not found" in message
    assert server.base_url in message


def test_server_error_through_load_embedder(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TB_TEST_EMBED_KEY", raising=False)
    server.reply = lambda body: (400, {"error": {"message": "input is too long"}})
    embedder = load_embedder(
        EmbedderSettings(
            name="openai:nomic-embed-text",
            base_url=server.base_url,
            api_key_env="TB_TEST_EMBED_KEY",
        )
    )
    with pytest.raises(EmbeddingError, match="HTTP 400: input is too long"):
        embedder.embed(["x"])
    assert server.requests[0]["auth"] == "Bearer not-needed"  # the dummy key of local servers


def test_wrong_number_of_embeddings(server: FakeServer) -> None:
    def short(body: dict[str, Any]) -> Reply:
        status, payload = embeddings_ok(body)
        payload["data"] = payload["data"][:1]
        return status, payload

    server.reply = short
    with pytest.raises(EmbeddingError, match="sent 2 texts, got 1 embeddings"):
        _embedder(server).embed(["a", "b"])


def test_unreachable_server() -> None:
    embedder = OpenAIEmbedder(
        "m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=2, max_retries=0
    )
    with pytest.raises(EmbeddingError, match=r"at http://127\.0\.0\.1:9/v1"):
        embedder.embed(["x"])


def test_timeout(server: FakeServer) -> None:
    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(1.0)
        return embeddings_ok(body)

    server.reply = slow
    with pytest.raises(EmbeddingError, match="timed out"):
        _embedder(server, timeout=0.2).embed(["x"])
