"""The middleware of the app: its HTTP-level defences, each a small ASGI middleware or a
helper over the ``server`` settings:

- :class:`BodyLimit`: a request body over ``server.max_body_bytes`` is answered 413 before any
  handler parses it (by its ``Content-Length`` at once, or as soon as a chunked body passes the
  limit); uploads (``POST /api/documents``) keep their own, larger ``library.max_file_bytes``.
- :class:`BodyIdleTimeout`: a request body that stalls (nothing arrives for
  ``server.body_idle_timeout_s``) is answered 408 and its connection closed; uvicorn has no
  such limit of its own.
- :class:`HostCheck`: a ``Host`` header the server does not answer to is 400 (DNS rebinding:
  a foreign site whose name resolves to 127.0.0.1 would otherwise read every document).
- :class:`SecurityHeaders`: every response gets ``X-Content-Type-Options: nosniff`` and a
  ``Referrer-Policy``; every HTML page a Content-Security-Policy with ``frame-ancestors 'none'``
  unless its route set its own.
- :class:`UnexpectedErrors`: what no handler took is a bug: logged with its traceback and
  answered 500 ``{"detail": "internal error"}``.

The chat's own limits are :mod:`.chat_limits`; what a viewer is shown of an answer is the
application's (:mod:`truthbase.app.redaction`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..app.redaction import INTERNAL_ERROR
from ..app.viewers import is_loopback
from ..config import ServerSettings

__all__ = [
    "PAGE_CSP",
    "BodyIdleTimeout",
    "BodyLimit",
    "HostCheck",
    "SecurityHeaders",
    "UnexpectedErrors",
    "allowed_hosts",
    "host_name",
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
#: Routes whose bodies have their own limit (the upload's, ``library.max_file_bytes``; a
#: report's, :data:`truthbase.app.exports.MAX_REPORT_BYTES`).
_OWN_LIMIT = frozenset({("POST", "/api/documents"), ("POST", "/api/reports/verify")})
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
        over = False

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

        await _guarded(self.app, scope, receive, send, counted, lambda: over, 413, self.detail)

    @property
    def detail(self) -> str:
        return f"request body too large: at most {self.limit} bytes"

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _closing(scope, receive, send, 413, self.detail)


class BodyIdleTimeout:
    """408 for a request whose body stalls: no chunk for ``timeout`` seconds before its last one.
    Only the body's reading is timed: once it is complete, ``receive`` waits for a disconnect
    as long as a response (a chat's stream) runs."""

    def __init__(self, app: ASGIApp, timeout: float) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body_done = stalled = False

        async def timed() -> Message:
            nonlocal body_done, stalled
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                # Raised as BodyLimit raises its 413: FastAPI re-raises an HTTPException from
                # reading the body, and an upload's own reading lets it through (nothing kept).
                stalled = True
                raise HTTPException(408, self.detail) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await _guarded(self.app, scope, receive, send, timed, lambda: stalled, 408, self.detail)

    @property
    def detail(self) -> str:
        return f"the request body stalled: nothing arrived for {self.timeout:g} s"


async def _guarded(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    guarded: Receive,
    refused: Callable[[], bool],
    status: int,
    detail: str,
) -> None:
    """Run ``app`` reading the body through ``guarded``; when ``guarded`` refused the body (it
    raised its HTTPException, ``refused()``) and no handler answered before, answer ``status``
    with ``detail`` here and close the connection."""
    watched = _Watched(send)
    try:
        await app(scope, guarded, watched)
    except HTTPException:
        if watched.started or not refused():
            raise
        await _closing(scope, receive, send, status, detail)


class _Watched:
    """``send`` that remembers whether the response has started: after that no other answer
    may be sent, only the connection closed."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


async def _closing(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    response = JSONResponse({"detail": detail}, status_code=status, headers={"Connection": "close"})
    await response(scope, receive, send)


def allowed_hosts(settings: ServerSettings) -> list[str] | None:
    """The host names the server answers to (lower case, no port); None: any.

    ``server.allowed_hosts`` when set; else, bound to a loopback address, the loopback names and
    the bind host; bound to any other address (where a login is always required and the session
    cookie is bound to the name the user signed in at), any."""
    if settings.allowed_hosts is not None:
        return [h.strip().strip("[]").lower() for h in settings.allowed_hosts]
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


class UnexpectedErrors:
    """ASGI middleware for what no handler took (not an HTTPException, not a TruthBaseError):
    a bug. Logged with its traceback and answered 500 ``{"detail": "internal error"}``; when the
    response has already started it is re-raised for the server to log and close."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        watched = _Watched(send)
        try:
            await self.app(scope, receive, watched)
        except Exception:
            if watched.started:
                raise
            logger.exception("unexpected error in %s %s", scope.get("method"), scope.get("path"))
            response = JSONResponse({"detail": INTERNAL_ERROR}, status_code=500)
            await response(scope, receive, send)
