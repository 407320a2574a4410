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
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..access import may_see
from ..app import AnswerPlan, Conflict, Forbidden, QuotaExceeded, Service
from ..app.redaction import redact_paths
from ..config import Settings
from ..errors import NotFound, TruthBaseError, Unavailable
from ..geometry import span_line_rects
from ..quota import Admission, retry_after_header
from ..records import Viewer
from ..store import StoreError
from .admin import add_admin_routes
from .auth import AuthGate, add_auth_routes
from .chat_limits import ChatStream, Slots
from .deps import viewer_of
from .epub_routes import add_epub_routes
from .invalid import invalid_request
from .library_routes import LIBRARY_ROUTES, add_library_routes
from .middleware import (
    BodyLimit,
    HostCheck,
    SecurityHeaders,
    UnexpectedErrors,
    allowed_hosts,
)
from .observe import METRICS_ROUTE, Observe, add_metrics_route
from .openapi_errors import declare_error_responses
from .pages import mount_web, page
from .quota import request_address
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
from .state import AppState

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


logger = logging.getLogger(__name__)


def error_status(exc: TruthBaseError) -> int:
    """The HTTP status of a TruthBaseError, by kind: 404 for a thing that does not exist, 503
    for a backend that cannot serve now (a chat model, an embedder, the index's database), 400
    for every other input, setting or file the request cannot be served with."""
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, QuotaExceeded):
        return 429
    if isinstance(exc, Unavailable | StoreError):
        return 503
    return 400


def default_web_dir() -> Path:
    """The repository's ``web/`` folder (src/truthbase/server/app.py -> ../../../web)."""
    return Path(__file__).resolve().parents[3] / "web"


def _package_version() -> str:
    try:
        return version("truthbase")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "0+unknown"


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _chat_events(service: Service, plan: AnswerPlan, cancelled: threading.Event) -> Iterator[bytes]:
    """The chat's server-sent events; runs in the thread pool one step at a time. The service
    records the answer and decides what the viewer is shown of each event (only an admin sees
    model endpoints and provider errors). ``cancelled`` set (the client went away) stops agent
    mode before its next model call."""
    for event in service.answer(plan, cancelled=cancelled.is_set):
        yield _sse(*service.shown(event))


def create_app(settings: Settings) -> FastAPI:
    """The app over ``settings.db``; the index is opened at startup and closed at shutdown."""
    state = AppState(settings)
    web_dir = settings.server.web_dir or default_web_dir()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
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
    app.add_middleware(UnexpectedErrors)
    # Outermost: the request id and the request's span cover the gate and the 500s too.
    app.add_middleware(Observe)
    slots = Slots(settings.server.max_concurrent_chats, settings.server.max_concurrent_agent)

    @app.exception_handler(TruthBaseError)
    async def truthbase_error(_: Request, exc: TruthBaseError) -> JSONResponse:
        headers = None
        if isinstance(exc, QuotaExceeded):
            wait = Admission(admitted=False, retry_after_s=exc.retry_after_s)
            headers = {"Retry-After": retry_after_header(wait)}
        detail = redact_paths(str(exc))
        return JSONResponse({"detail": detail}, status_code=error_status(exc), headers=headers)

    app.add_exception_handler(RequestValidationError, invalid_request)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """FastAPI's own answer, with no server path in its detail (those are in the log)."""
        if isinstance(exc.detail, str):
            exc.detail = redact_paths(exc.detail)
        return await http_exception_handler(request, exc)

    def service(request: Request) -> Service:
        """The application service as this request's viewer may use it."""
        return Service(state.store, settings, state.embedder, viewer_of(request))

    def visible(request: Request, doc_id: str) -> Any:
        """The document when the caller may see it; 404 (NotFound) as for a missing one."""
        return service(request).visible(doc_id)

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

    @app.get("/api/search", response_model=SearchOut, tags=["search"])
    async def search_route(
        request: Request,
        q: Annotated[str, Query(min_length=1, max_length=2000, description="The query.")],
        k: Annotated[int, Query(ge=1, le=100, description="Results.")] = 8,
    ) -> SearchOut:
        """Hybrid search (full text + dense, fused): ranked chunks with their rects, from the
        documents the caller may see (filtered inside each retrieval arm)."""
        address = request_address(request, settings)
        hits = await run_in_threadpool(service(request).search, q, k=k, address=address)
        return SearchOut(query=q, results=[SearchHitOut.of(h, i) for i, h in enumerate(hits, 1)])

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
        chat = service(request)
        plan = await run_in_threadpool(
            chat.plan_answer,
            body.question,
            mode=body.mode,
            doc=body.doc,
            k=settings.server.sources,
        )  # 400 for a mode that cannot run, 403 for agent mode, 404 for a hidden doc
        release = slots.take(plan.mode == "agent")
        if release is None:
            raise HTTPException(
                503,
                "the server is answering as many chats as it may at once: try again shortly",
                headers={"Retry-After": str(Slots.RETRY_AFTER_S)},
            )
        try:
            address = request_address(request, settings)
            await run_in_threadpool(chat.admit_answer, plan, address)
        except BaseException:
            release()
            raise
        gone = threading.Event()

        async def stream() -> AsyncIterator[bytes]:
            async for chunk in iterate_in_threadpool(_chat_events(chat, plan, gone)):
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
