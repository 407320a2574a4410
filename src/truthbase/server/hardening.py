"""The HTTP-level defences of the app, each a small ASGI middleware or helper over the
``server`` settings:

- :class:`BodyLimit`: a request body over ``server.max_body_bytes`` is answered 413 before any
  handler parses it (by its ``Content-Length`` at once, or as soon as a chunked body passes the
  limit); uploads (``POST /api/documents``) keep their own, larger ``library.max_file_bytes``.
- :class:`HostCheck`: a ``Host`` header the server does not answer to is 400 (DNS rebinding:
  a foreign site whose name resolves to 127.0.0.1 would otherwise read every document).
- :class:`SecurityHeaders`: every response gets ``X-Content-Type-Options: nosniff`` and a
  ``Referrer-Policy``; every HTML page a Content-Security-Policy with ``frame-ancestors 'none'``
  unless its route set its own.
- :class:`Slots`: the chats (and agent-mode chats) one process runs at once; beyond
  ``server.max_concurrent_chats`` / ``max_concurrent_agent`` a chat is refused with 503 and
  ``Retry-After`` at once, without waiting for a slot.
- :class:`ChatStream`: the chat's event stream, which notices the client going away even while
  the answer is busy between events (so agent mode stops before its next model call) and gives
  its slot back however it ends.
- :func:`privileged` and :func:`redact_event`: who may use agent mode and see the model's
  endpoints; what non-admins see of an answer's events: no internal URLs, no
  provider error strings (they go to the log).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import AsyncIterable, Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import ServerSettings
from ..records import Viewer

__all__ = [
    "PAGE_CSP",
    "BodyLimit",
    "ChatStream",
    "HostCheck",
    "SecurityHeaders",
    "Slots",
    "allowed_hosts",
    "privileged",
    "redact_event",
]

logger = logging.getLogger(__name__)

#: The Content-Security-Policy of the app's own pages: scripts, styles, workers and frames from
#: this origin only (pdf.js runs its worker from /pdfjs and may draw images from blob: and data:
#: URLs; its WebAssembly decoders need 'wasm-unsafe-eval'), never framed by another page.
PAGE_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
REFERRER_POLICY = "same-origin"
#: Routes whose bodies have their own limit (the upload's, ``library.max_file_bytes``).
_OWN_LIMIT = frozenset({("POST", "/api/documents")})
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class BodyLimit:
    """413 for a request body over ``limit`` bytes, before the handler reads it; nothing of
    the body is parsed or echoed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) in _OWN_LIMIT:
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = over = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    # An HTTPException: FastAPI re-raises it from reading the body (any other
                    # exception there it answers 400), and its handler answers 413.
                    over = True
                    raise HTTPException(413, self.detail)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except HTTPException:
            if started or not over:
                raise
            await self._refuse(scope, receive, send)

    @property
    def detail(self) -> str:
        return f"request body too large: at most {self.limit} bytes"

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = JSONResponse(
            {"detail": self.detail}, status_code=413, headers={"Connection": "close"}
        )
        await response(scope, receive, send)


def allowed_hosts(settings: ServerSettings) -> list[str] | None:
    """The host names the server answers to (lower case, no port); None: any.

    ``server.allowed_hosts`` when set; else, bound to a loopback address, the loopback names and
    the bind host; bound to any other address (where a login is always required and the session
    cookie is bound to the name the user signed in at), any."""
    if settings.allowed_hosts is not None:
        return [h.strip().strip("[]").lower() for h in settings.allowed_hosts]
    from .auth import is_loopback

    if not is_loopback(settings.host):
        return None
    return sorted({*_LOOPBACK_NAMES, settings.host.strip("[]").lower()})


def host_name(value: str) -> str:
    """The name of a ``Host`` header: without the port, IPv6 brackets dropped, lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HostCheck:
    """400 for a request whose ``Host`` is not one of ``hosts`` (``"*"`` matches any; an entry
    ``.example.org`` matches that domain and its subdomains)."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = tuple(hosts)

    def allows(self, name: str) -> bool:
        for entry in self.hosts:
            if entry == "*" or entry == name:
                return True
            if entry.startswith(".") and (name == entry[1:] or name.endswith(entry)):
                return True
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            name = host_name(Headers(scope=scope).get("host", ""))
            if not self.allows(name):
                response = PlainTextResponse(
                    "invalid Host header (see server.allowed_hosts)", status_code=400
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """nosniff and a referrer policy on every response; :data:`PAGE_CSP` on every HTML
    response without a CSP of its own."""

    def __init__(self, app: ASGIApp, csp: str = PAGE_CSP) -> None:
        self.app = app
        self.csp = csp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", REFERRER_POLICY)
                html = headers.get("content-type", "").startswith("text/html")
                if html and "content-security-policy" not in headers:
                    headers["Content-Security-Policy"] = self.csp
                    headers["X-Frame-Options"] = "DENY"  # frame-ancestors for old browsers
            await send(message)

        await self.app(scope, receive, with_headers)


class Slots:
    """At most ``chats`` chats at once, of which at most ``agent`` in agent mode; taking a slot
    never waits (the caller answers 503 when it gets none)."""

    #: The ``Retry-After`` of a chat refused for want of a slot (seconds).
    RETRY_AFTER_S = 2

    def __init__(self, chats: int, agent: int) -> None:
        self.chats = chats
        self.agent = agent
        self._lock = threading.Lock()
        self._running = 0
        self._agents = 0

    def take(self, agent: bool) -> Callable[[], None] | None:
        """A slot's release function, or None when every slot (of the kind) is taken."""
        with self._lock:
            if self._running >= self.chats or (agent and self._agents >= self.agent):
                return None
            self._running += 1
            self._agents += agent
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                self._running -= 1
                self._agents -= agent

        return release


_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s\"'<>)\]]+", re.IGNORECASE)
#: Keys whose values are provider error strings (model failures, fallback reasons from them).
_PROVIDER_KEYS = frozenset({"error", "failed", "failures", "model_failures"})
HIDDEN = "[hidden]"
ERROR_MESSAGE = "the answer could not be completed (the server log has the details)"


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        return _URL.sub(HIDDEN, value)
    if isinstance(value, dict):
        return {k: (_hide(v) if k in _PROVIDER_KEYS else _redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value


def _hide(value: Any) -> Any:
    """A provider error value as a non-admin sees it: its shape kept, its text hidden."""
    if isinstance(value, str):
        return HIDDEN
    if isinstance(value, dict):
        return {k: (_hide(v) if k == "error" else _redact(v)) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, bytes):
        return [_hide(v) for v in value]
    return value


def privileged(viewer: Viewer) -> bool:
    """An admin, or the local user of a server without accounts (who runs it, reads its log
    and is shown as admin by /api/me): may use agent mode under ``server.agent_mode =
    "admins"`` and sees model endpoints and provider errors."""
    return viewer.admin or viewer.local


def redact_event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as a non-admin gets it: URLs (the model endpoints in ``answerer``,
    ``info`` and problems) and provider error strings hidden; an ``error`` event's message
    replaced by a general one, the original logged."""
    if kind == "error":
        logger.warning(
            "chat error at %s (hidden from the client): %s", data.get("stage"), data.get("message")
        )
        return {**data, "message": ERROR_MESSAGE}
    redacted: dict[str, Any] = _redact(data)
    return redacted


class ChatStream(StreamingResponse):
    """A streaming response that tells the producer when the client goes away: ``gone`` is
    set on ``http.disconnect`` (even while the producer is busy in a worker thread between two
    events, when nothing is being sent), and ``release`` runs however the response ends."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        gone: threading.Event,
        release: Callable[[], None],
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
    ) -> None:
        super().__init__(content, headers=headers, media_type=media_type)
        self.gone = gone
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def produce() -> None:
                    try:
                        await self.stream_response(send)
                    except OSError:  # the client went away mid-send
                        self.gone.set()
                    group.cancel_scope.cancel()

                group.start_soon(produce)
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        self.gone.set()
                        group.cancel_scope.cancel()
                        break
        finally:
            self.release()
