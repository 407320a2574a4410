"""A scripted OpenAI-compatible chat server for the LLM tests, and a dead endpoint.

A real HTTP server in a thread on 127.0.0.1 plays the chat server: each test queues the replies
it should give (JSON completions, server-sent event streams, 500s, garbage, slow replies) and
reads back the requests it got. The ``server`` fixture of tests/unit/conftest.py runs one per
test.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from truthbase.llm import OpenAIChatModel


@dataclass
class Reply:
    """One scripted reply. ``pieces`` makes it a stream; ``tail`` is raw SSE data after them;
    ``done`` ends the stream whole (a finish_reason chunk and [DONE]), else the connection just
    closes (a reply cut off)."""

    status: int = 200
    body: Any = None
    pieces: list[str] | None = None
    tail: str | None = None
    delay_s: float = 0.0
    pause_s: float = 0.0  # between the pieces and the tail of a stream
    done: bool = True


def stream_piece(text: str) -> str:
    """One stream chunk's raw SSE (for a ``tail`` that comes after a pause)."""
    return _chunk(text)


def completion(text: str | None, model: str = "scripted") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }


def _chunk(content: str | None, role: str | None = None, finish: str | None = None) -> str:
    delta: dict[str, Any] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    event = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(event)}\n\n"


@dataclass
class Scripted:
    base_url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: JSON bodies the server answers GETs with, by path ("/v1/models", "/props"); else 404.
    pages: dict[str, Any] = field(default_factory=dict)
    #: Writes the reply from the request's body when no reply is queued (a model whose answer
    #: depends on its prompt, e.g. one that obeys what a document tells it).
    responder: Callable[[dict[str, Any]], Reply] | None = None

    def say(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def model(self, name: str = "scripted-model") -> OpenAIChatModel:
        return OpenAIChatModel(name, base_url=self.base_url, api_key="k", name=name)


@contextlib.contextmanager
def scripted_server() -> Iterator[Scripted]:
    """A scripted server for the ``with`` block."""
    scripted = Scripted(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path in scripted.pages:
                self._json(Reply(200, scripted.pages[self.path]))
            else:
                self._json(Reply(404, {"error": "not found"}))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            scripted.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            if scripted.replies:
                reply = scripted.replies.pop(0)
            elif scripted.responder is not None:
                reply = scripted.responder(body)
            else:
                reply = Reply(500, {"error": "?"})
            time.sleep(reply.delay_s)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                if reply.pieces is not None:
                    self._stream(reply)
                else:
                    self._json(reply)

        def _json(self, reply: Reply) -> None:
            raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk(None, role="assistant").encode())
            for piece in reply.pieces or []:
                self.wfile.write(_chunk(piece).encode())
                self.wfile.flush()
            time.sleep(reply.pause_s)
            if reply.tail is not None:
                self.wfile.write(reply.tail.encode())
            if reply.done:  # a whole reply ends with its finish_reason, then [DONE]
                self.wfile.write(_chunk(None, finish="stop").encode())
                self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.block_on_close = False  # a slow scripted reply must not hold up the teardown
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    scripted.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield scripted
    finally:
        httpd.shutdown()
        httpd.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def tool_reply(*calls: tuple[str, dict[str, Any] | str], text: str | None = None) -> Reply:
    body = completion(text)
    body["choices"][0]["message"]["tool_calls"] = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls, 1)
    ]
    body["choices"][0]["finish_reason"] = "tool_calls"
    return Reply(body=body)


def dead_model(name: str = "dead") -> OpenAIChatModel:
    """A model whose server is gone: every call fails to connect."""
    return OpenAIChatModel("gone", base_url=closed_port_url(), api_key="k", name=name)
