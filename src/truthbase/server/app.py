"""The FastAPI app: REST + server-sent events over one index, plus the static chat page and the
pdf.js viewer.

Every store and embedder call is synchronous (SQLite, onnxruntime), so each runs in Starlette's
thread pool, never on the event loop. One :class:`~truthbase.store.SQLiteStore` is shared: it
serializes its own connection with a lock.

Errors: a :class:`~truthbase.errors.TruthBaseError` is answered with the status
:func:`error_status` gives its kind and a JSON ``detail`` (its message); any other exception is
a bug, logged with its traceback and answered 500 ``{"detail": "internal error"}``. In the chat
stream, which has already answered 200, the same split decides the ``error`` event's message.
"""

from __future__ import annotations

import json
import logging
import mimetypes
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access import may_see, require_visible, visible_ids
from ..answer import DoneEvent, record_answer
from ..blas import limit_blas_threads
from ..config import DEFAULT_K, Settings
from ..embed import Embedder, load_embedder
from ..errors import NotFound, TruthBaseError, Unavailable
from ..geometry import span_line_rects
from ..modes import answer_events, resolve_chat_mode
from ..quota import QuotaLimits, client_key_for, retry_after_header
from ..records import OPERATOR, Viewer
from ..retrieve.hybrid import search
from ..store import Store, StoreError, open_store
from ..telemetry import span as trace_span
from .admin import add_admin_routes
from .auth import AuthGate, add_auth_routes, load_secret_key, secret_key_path, viewer_of
from .epub_routes import add_epub_routes
from .files import FileState, file_key, hash_matches, redact_paths
from .hardening import (
    BodyLimit,
    ChatStream,
    HostCheck,
    SecurityHeaders,
    Slots,
    allowed_hosts,
    privileged,
    redact_event,
)
from .invalid import invalid_request
from .library_routes import LIBRARY_ROUTES, add_library_routes
from .observe import METRICS_ROUTE, Observe, add_metrics_route
from .openapi_errors import declare_error_responses
from .pages import mount_web, page
from .quota import client_key, quota_limits
from .schemas import (
    MAX_INDEX,
    ChatIn,
    DocumentOut,
    GeometryOut,
    HealthOut,
    SearchHitOut,
    SearchOut,
    SpanOut,
)

# Browsers refuse ES modules served with a non-JavaScript type; some systems lack this mapping.
mimetypes.add_type("text/javascript", ".mjs")

#: Every route, as README.md documents it (a test keeps the two in step).
ROUTES = (
    "GET /",
    "GET /view",
    "GET /read",
    "GET /healthz",
    "GET /api/documents",
    "GET /api/documents/{doc_id}/file",
    "GET /api/search",
    "GET /api/spans",
    "GET /api/epub/sections/{doc_id}/{unit}",
    "GET /api/epub/sections/{doc_id}/{unit}/xhtml",
    "GET /api/epub/spans",
    "GET /api/epub/images/{doc_id}",
    "POST /api/chat",
    "GET /docs",
    "GET /login",
    "POST /login",
    "POST /logout",
    "GET /api/me",
    "GET /admin",
    "GET /api/admin/usage",
    METRICS_ROUTE,
    *LIBRARY_ROUTES,
)

_SHA256_HEX = r"^[0-9a-f]{64}$"

#: The body of a 500: nothing of the exception reaches the client (it is in the log).
INTERNAL_ERROR = "internal error"

logger = logging.getLogger(__name__)


def error_status(exc: TruthBaseError) -> int:
    """The HTTP status of a TruthBaseError, by kind: 404 for a thing that does not exist, 503
    for a backend that cannot serve now (a chat model, an embedder, the index's database), 400
    for every other input, setting or file the request cannot be served with."""
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Unavailable | StoreError):
        return 503
    return 400


class _UnexpectedErrors:
    """ASGI middleware for what no handler took (not an HTTPException, not a TruthBaseError):
    a bug. Logged with its traceback and answered 500 ``{"detail": "internal error"}``; when the
    response has already started it is re-raised for the server to log and close."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            if started:
                raise
            logger.exception("unexpected error in %s %s", scope.get("method"), scope.get("path"))
            response = JSONResponse({"detail": INTERNAL_ERROR}, status_code=500)
            await response(scope, receive, send)


def default_web_dir() -> Path:
    """The web assets shipped inside the package (``truthbase/web``: the pages, their scripts and
    styles, the npm-installed pdf.js and Swagger UI files), in a source tree and a wheel alike."""
    return Path(str(files("truthbase").joinpath("web")))


def _package_version() -> str:
    try:
        return version("truthbase")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "0+unknown"


class _State:
    """The open index and the (lazily loaded) embedder of one app."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()
        self._file_checks: dict[tuple[str, int, int, int, int], bool] = {}
        self._key: bytes | None = None
        self._workers: list[threading.Thread] = []
        self._stop_workers = threading.Event()
        self._wake_workers = threading.Event()

    def key(self) -> bytes:
        """The session cookies' signing key (read, or created, on first use)."""
        with self._lock:
            if self._key is None:
                self._key = load_secret_key(secret_key_path(self.settings))
            return self._key

    def open(self) -> None:
        self._store = open_store(self.settings)

    def start_workers(self) -> None:
        """The server's own ingest workers (``library.server_workers`` threads)."""
        from ..ingest.worker import WorkerOptions, work, worker_name

        options = WorkerOptions.from_settings(self.settings)

        def loop(n: int) -> None:
            work(
                self.store,
                self.embedder,
                options,
                worker=f"{worker_name('server')}-{n}",
                stop=self._stop_workers,
                wake=self._wake_workers,
            )

        for n in range(self.settings.library.server_workers):
            thread = threading.Thread(target=loop, args=(n,), daemon=True, name=f"ingest-{n}")
            thread.start()
            self._workers.append(thread)

    def wake_workers(self) -> None:
        self._wake_workers.set()

    def stop_workers(self) -> None:
        self._stop_workers.set()
        self._wake_workers.set()
        for thread in self._workers:
            thread.join(timeout=30)
        self._workers = []

    def close(self) -> None:
        self.stop_workers()
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the app's store is not open (is the lifespan running?)")
        return self._store

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = load_embedder(self.settings.embedder)
            return self._embedder

    def file_state(self, doc_id: str, path: Path) -> FileState:
        """ "ok" when ``path`` is a regular file, reached through no link, whose bytes still hash
        to the document id (cached per file identity); "gone" when nothing is there; "changed"
        otherwise (other bytes, a link, not a regular file)."""
        key = file_key(path)
        if key is None:
            return "changed" if os.path.lexists(path) else "gone"
        with self._lock:
            cached = self._file_checks.get(key)
        if cached is None:
            cached = hash_matches(path, doc_id)
            with self._lock:
                self._file_checks[key] = cached
        return "ok" if cached else "changed"

    def file_matches_index(self, doc_id: str, path: Path) -> bool:
        """Whether the file is still the one ingested (see :meth:`file_state`)."""
        return self.file_state(doc_id, path) == "ok"


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _answer_events(
    state: _State,
    question: str,
    mode: str | None = None,
    doc: str | None = None,
    viewer: Viewer | None = None,
    cancelled: threading.Event | None = None,
) -> Iterator[bytes]:
    """The chat's server-sent events; runs in the thread pool one step at a time. ``mode`` as
    for `truthbase ask` (None or "auto": llm when one is configured; the route has already
    refused a mode that cannot run); ``doc`` scopes agent mode's book tools to one document;
    sources come from what ``viewer`` may see; only an admin sees model endpoints and provider
    errors (:func:`~.hardening.redact_event`). ``cancelled`` set (the client went away) stops
    agent mode before its next model call."""
    for kind, data in _raw_events(state, question, mode, doc, viewer, cancelled):
        if viewer is None or not privileged(viewer):
            data = redact_event(kind, data)
        yield _sse(kind, data)


def _raw_events(
    state: _State,
    question: str,
    mode: str | None,
    doc: str | None,
    viewer: Viewer | None,
    cancelled: threading.Event | None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    chosen = resolve_chat_mode(mode, state.settings.llm)
    try:
        embedder = state.embedder()
    except Exception as exc:
        yield _error_event("embedder", exc)
        return
    events = answer_events(
        state.store,
        embedder,
        question,
        state.settings,
        mode=chosen,
        k=state.settings.server.sources,
        doc_id=doc if chosen == "agent" else None,
        viewer=viewer if viewer is not None else OPERATOR,
        cancelled=cancelled.is_set if cancelled is not None else None,
    )
    try:
        for event in events:
            if isinstance(event, DoneEvent):
                record_answer(state.store, event.answer)  # for `truthbase verify`
            yield event.kind, event.to_json()
    except Exception as exc:
        yield _error_event("answer", exc)


def _error_event(stage: str, exc: Exception) -> tuple[str, dict[str, Any]]:
    """The chat stream's ``error`` event for ``exc``: a TruthBaseError says what it is; any
    other exception is a bug, logged with its traceback and shown as "internal error"."""
    if isinstance(exc, TruthBaseError):
        message = redact_paths(f"{type(exc).__name__}: {exc}")
    else:
        logger.error("unexpected error in the chat stream (%s)", stage, exc_info=exc)
        message = INTERNAL_ERROR
    return "error", {"type": "error", "stage": stage, "message": message}


def create_app(settings: Settings) -> FastAPI:
    """The app over ``settings.db``; the index is opened at startup and closed at shutdown."""
    state = _State(settings)
    web_dir = settings.server.web_dir or default_web_dir()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        limit_blas_threads()  # the server's start is an edge: see truthbase.blas
        await run_in_threadpool(state.open)
        state.start_workers()
        try:
            yield
        finally:
            await run_in_threadpool(state.close)

    app = FastAPI(
        title="TruthBase",
        version=_package_version(),
        description="Verifiable question answering over PDFs: every citation opens on the exact "
        "supporting passage.",
        lifespan=lifespan,
        # /docs is Swagger UI from web/node_modules (no CDN script on our origin): pages.mount_web.
        docs_url=None,
        redoc_url=None,
    )
    app.state.truthbase = state
    # Starlette runs the last added outermost: bugs in the gate are answered 500 too.
    app.add_middleware(AuthGate, store=lambda: state.store, settings=settings, key=state.key)
    app.add_middleware(BodyLimit, limit=settings.server.max_body_bytes)
    hosts = allowed_hosts(settings.server)
    if hosts is not None:
        app.add_middleware(HostCheck, hosts=hosts)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(_UnexpectedErrors)
    # Outermost: the request id and the request's span cover the gate and the 500s too.
    app.add_middleware(Observe)
    slots = Slots(settings.server.max_concurrent_chats, settings.server.max_concurrent_agent)

    @app.exception_handler(TruthBaseError)
    async def truthbase_error(_: Request, exc: TruthBaseError) -> JSONResponse:
        return JSONResponse({"detail": redact_paths(str(exc))}, status_code=error_status(exc))

    app.add_exception_handler(RequestValidationError, invalid_request)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """FastAPI's own answer, with no server path in its detail (those are in the log)."""
        if isinstance(exc.detail, str):
            exc.detail = redact_paths(exc.detail)
        return await http_exception_handler(request, exc)

    def visible(request: Request, doc_id: str) -> Any:
        """The document when the caller may see it; 404 (NotFound) as for a missing one."""
        return require_visible(viewer_of(request), state.store.document(doc_id), doc_id)

    async def _admit(request: Request, viewer: Viewer, limits: QuotaLimits, kind: str = "") -> None:
        """Count the request against ``limits`` (keyed by user, or by client address through
        the trusted proxies only): 429 with Retry-After when refused. ``kind`` keeps the
        counters of another route (``search:``) apart from the chat's."""
        if limits.unlimited:  # the default: no counting at all
            return
        address = client_key(request, settings.quota.client_header, settings.auth.trusted_proxies)
        key = kind + client_key_for(viewer.user, address)
        with trace_span("quota"):
            admission = await run_in_threadpool(state.store.try_admit, key, time.time(), limits)
        if not admission.admitted:
            raise HTTPException(
                429,
                "quota exceeded: try again later",
                headers={"Retry-After": retry_after_header(admission)},
            )

    @app.get("/healthz", response_model=HealthOut, tags=["meta"])
    async def healthz(request: Request) -> HealthOut:
        """Liveness; open without a login, when it leaves the document count out."""
        viewer = getattr(request.state, "viewer", None)
        count: int | None = None
        if isinstance(viewer, Viewer):
            documents = await run_in_threadpool(state.store.list_documents)
            count = sum(1 for d in documents if may_see(viewer, d))
        return HealthOut(status="ok", documents=count, version=_package_version())

    @app.get("/api/documents", response_model=list[DocumentOut], tags=["documents"])
    async def list_documents(request: Request) -> list[DocumentOut]:
        """The ingested documents the caller may see."""
        viewer = viewer_of(request)
        documents = await run_in_threadpool(state.store.list_documents)
        return [DocumentOut.of(d) for d in documents if may_see(viewer, d)]

    @app.get("/api/documents/{doc_id}/file", tags=["documents"], response_class=FileResponse)
    async def document_file(
        doc_id: Annotated[str, PathParam(pattern=_SHA256_HEX)], request: Request
    ) -> FileResponse:
        """The bytes of an ingested document, looked up by id (never by a path from the request),
        served only while they still hash to the id: 404 when the file is gone, 409 when it
        changed since ingest or is now a symbolic link (re-ingest it)."""
        info = await run_in_threadpool(visible, request, doc_id)
        path = Path(info.path)
        found = await run_in_threadpool(state.file_state, doc_id, path)
        if found != "ok":
            logger.warning("document %s: its file %s is %s", doc_id, path, found)
            if found == "gone":
                raise HTTPException(404, f"the file of document {doc_id} is gone")
            raise HTTPException(
                409, f"the file of document {doc_id} changed since ingest; re-ingest it"
            )
        media = "application/pdf" if info.kind == "pdf" else "application/epub+zip"
        return FileResponse(
            path,
            media_type=media,
            headers={
                "Content-Disposition": "inline",
                "X-TruthBase-Matches-Index": "true",
                "Cache-Control": "no-cache",
                "X-Content-Type-Options": "nosniff",
            },
        )

    search_limits = QuotaLimits(
        per_minute=settings.quota.search_per_client_per_minute,
        per_day=settings.quota.search_per_client_per_day,
    )

    @app.get("/api/search", response_model=SearchOut, tags=["search"])
    async def search_route(
        request: Request,
        q: Annotated[str, Query(min_length=1, max_length=2000, description="The query.")],
        k: Annotated[int, Query(ge=1, le=100, description="Results.")] = DEFAULT_K,
    ) -> SearchOut:
        """Hybrid search (full text + dense, fused): ranked chunks with their rects, from the
        documents the caller may see (filtered inside each retrieval arm)."""
        viewer = viewer_of(request)
        await _admit(request, viewer, search_limits, "search:")

        def run() -> SearchOut:
            scope = None if viewer.local else visible_ids(viewer, state.store.list_documents())
            result = search(
                state.store, state.embedder(), q, settings.retrieval, k=k, doc_ids=scope
            )
            return SearchOut(
                query=q, results=[SearchHitOut.of(h, i) for i, h in enumerate(result.hits, 1)]
            )

        return await run_in_threadpool(run)

    @app.get("/api/spans", response_model=SpanOut, tags=["documents"])
    async def span(
        request: Request,
        doc: Annotated[str, Query(pattern=_SHA256_HEX, description="Document id.")],
        page: Annotated[int, Query(ge=1, le=MAX_INDEX, description="1-based page.")],
        start: Annotated[
            int, Query(ge=0, le=MAX_INDEX, description="Offset into the page's text.")
        ],
        end: Annotated[int, Query(ge=0, le=MAX_INDEX, description="End offset (exclusive).")],
    ) -> SpanOut:
        """The rects of any span of a page's canonical text, with the page geometry."""

        def run() -> SpanOut:
            info = visible(request, doc)
            unit = state.store.unit(doc, page - 1)
            if unit is None:
                raise HTTPException(404, f"document {doc} has no page {page}")
            if not start <= end <= len(unit.text):
                raise HTTPException(
                    422, f"span [{start}, {end}) outside page text of length {len(unit.text)}"
                )
            rects = span_line_rects(unit.text, unit.boxes, start, end)
            matches: bool | None = None
            if unit.text_source == "ocr":
                path = Path(info.path)
                matches = state.file_matches_index(doc, path)
            return SpanOut(
                doc=doc,
                title=info.title,
                page=page,
                unit=unit.index,
                page_count=info.unit_count,
                start=start,
                end=end,
                text=unit.text[start:end],
                rects=rects,
                geometry=GeometryOut.of(unit.geometry) if unit.geometry else None,
                page_text=unit.text,
                label=unit.label,
                text_source=unit.text_source,
                file_matches=matches,
            )

        return await run_in_threadpool(run)

    add_epub_routes(app, state, state.file_matches_index, visible)
    add_auth_routes(app, lambda: state.store, settings, state.key, lambda n: page(web_dir, n))
    add_admin_routes(app, lambda: state.store, settings, lambda n: page(web_dir, n))
    add_library_routes(app, state)
    if settings.telemetry.metrics:
        add_metrics_route(app, lambda: state.store)

    @app.post(
        "/api/chat",
        tags=["chat"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def chat(body: ChatIn, request: Request) -> StreamingResponse:
        """One answer as server-sent events: ``sources`` (with spans and rects) first, then
        ``token``s, then ``citations`` (verified spans with rects), then ``done`` or ``error``.
        Each event's data is JSON with a ``type`` field equal to the event name.

        Refused with 429 and ``Retry-After`` (before any model call) when the caller's quota
        (a signed-in user's by name; the anonymous local mode's by client address) or the
        global one is spent; agent mode also counts against ``quota.agent_per_day``.

        Refused before anything runs: 400 for ``llm`` without an LLM configured; 403 for
        agent mode when ``server.agent_mode`` keeps it for admins; 503 with ``Retry-After``
        when the process already runs ``server.max_concurrent_chats`` chats
        (``max_concurrent_agent`` in agent mode). A client that goes away stops agent mode
        before its next model call."""
        viewer = viewer_of(request)
        chosen = resolve_chat_mode(body.mode, settings.llm)  # InvalidInput: 400
        agent = chosen == "agent"
        if agent and settings.server.agent_mode == "admins" and not privileged(viewer):
            raise HTTPException(403, "agent mode is for admins here (server.agent_mode)")
        release = slots.take(agent)
        if release is None:
            raise HTTPException(
                503,
                "the server is answering as many chats as it may at once: try again shortly",
                headers={"Retry-After": str(Slots.RETRY_AFTER_S)},
            )
        try:
            await _admit(request, viewer, quota_limits(settings.quota).for_request(agent))
        except BaseException:
            release()
            raise
        gone = threading.Event()

        async def stream() -> AsyncIterator[bytes]:
            events = _answer_events(state, body.question, body.mode, body.doc, viewer, gone)
            async for chunk in iterate_in_threadpool(events):
                if gone.is_set():
                    break
                yield chunk

        return ChatStream(
            stream(),
            gone=gone,
            release=release,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    mount_web(app, web_dir)
    declare_error_responses(app)
    return app
