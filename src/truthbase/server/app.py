"""The FastAPI app: REST + server-sent events over one index, plus the static chat page and the
pdf.js viewer.

The app is its routers (:mod:`.documents`, :mod:`.epub_routes`, :mod:`.auth`, :mod:`.admin`,
:mod:`.library_routes`, :mod:`.collections`, :mod:`.threads`, :mod:`.observe`'s metrics,
:mod:`.chat`), whose routes take what they need through dependencies (:mod:`.deps`: the viewer,
the state, the settings, the store, the client's address, the application service), the
middleware (:mod:`.middleware`, the gate of :mod:`.auth`, :mod:`.observe`) and the error
handlers below.

Every store and embedder call is synchronous (SQLite, onnxruntime), so each runs in Starlette's
thread pool, never on the event loop. One :class:`~truthbase.store.SQLiteStore` is shared: it
serializes its own connection with a lock.

Errors: a :class:`~truthbase.errors.TruthBaseError` is answered with the status
:func:`error_status` gives its kind and a JSON ``detail`` (its message); any other exception is
a bug, logged with its traceback and answered 500 ``{"detail": "internal error"}``. In the chat
stream, which has already answered 200, the same split decides the ``error`` event's message.
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..app import Conflict, Forbidden, NotSignedIn, QuotaExceeded
from ..app.redaction import redact_paths
from ..blas import limit_blas_threads
from ..config import Settings
from ..errors import NotFound, TruthBaseError, Unavailable
from ..quota import Admission, retry_after_header
from ..store import StoreError
from . import (
    admin,
    auth,
    chat,
    collections,
    documents,
    epub_routes,
    exports,
    feedback,
    library_routes,
    shares,
    threads,
)
from .auth import AuthGate
from .collections import COLLECTION_ROUTES
from .documents import package_version
from .exports import EXPORT_ROUTES
from .invalid import invalid_request
from .library_routes import LIBRARY_ROUTES
from .middleware import (
    BodyIdleTimeout,
    BodyLimit,
    HostCheck,
    SecurityHeaders,
    UnexpectedErrors,
    allowed_hosts,
)
from .observe import METRICS_ROUTE, Observe, metrics_router
from .openapi_errors import declare_error_responses
from .pages import mount_web
from .shares import SHARE_ROUTES
from .state import AppState
from .threads import THREAD_ROUTES

__all__ = ["ROUTES", "create_app", "default_web_dir", "error_status"]

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
    "POST /api/answers/{answer_id}/feedback",
    "GET /api/answers/{answer_id}/feedback",
    "GET /api/feedback",
    METRICS_ROUTE,
    *LIBRARY_ROUTES,
    *COLLECTION_ROUTES,
    *THREAD_ROUTES,
    *EXPORT_ROUTES,
    *SHARE_ROUTES,
)

logger = logging.getLogger(__name__)


def error_status(exc: TruthBaseError) -> int:
    """The HTTP status of a TruthBaseError, by kind: 404 for a thing that does not exist, 503
    for a backend that cannot serve now (a chat model, an embedder, the index's database), 400
    for every other input, setting or file the request cannot be served with."""
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, NotSignedIn):
        return 401
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
    """The web assets shipped inside the package (``truthbase/web``: the pages, their scripts and
    styles, the npm-installed pdf.js and Swagger UI files), in a source tree and a wheel alike."""
    return Path(str(files("truthbase").joinpath("web")))


def _lifespan(state: AppState) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Open the index and start the ingest workers at startup; stop and close at shutdown."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        limit_blas_threads()  # the server's start is an edge: see truthbase.blas
        await run_in_threadpool(state.open)
        state.start_workers()
        try:
            yield
        finally:
            await run_in_threadpool(state.close)

    return lifespan


def _add_middleware(app: FastAPI, state: AppState) -> None:
    server = state.settings.server
    # Starlette runs the last added outermost: bugs in the gate are answered 500 too.
    app.add_middleware(AuthGate, state=state)
    app.add_middleware(BodyLimit, limit=server.max_body_bytes)
    app.add_middleware(BodyIdleTimeout, timeout=server.body_idle_timeout_s)
    hosts = allowed_hosts(server)
    if hosts is not None:
        app.add_middleware(HostCheck, hosts=hosts)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(UnexpectedErrors)
    # Outermost: the request id and the request's span cover the gate and the 500s too.
    app.add_middleware(Observe)


async def _truthbase_error(_: Request, exc: Exception) -> Response:
    """A TruthBaseError: the status of its kind, its message (no server path) as ``detail``;
    a refused quota says when to retry."""
    assert isinstance(exc, TruthBaseError)
    headers = None
    if isinstance(exc, QuotaExceeded):
        wait = Admission(admitted=False, retry_after_s=exc.retry_after_s)
        headers = {"Retry-After": retry_after_header(wait)}
    detail = redact_paths(str(exc))
    return JSONResponse({"detail": detail}, status_code=error_status(exc), headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """FastAPI's own answer, with no server path in its detail (those are in the log)."""
    assert isinstance(exc, StarletteHTTPException)
    if isinstance(exc.detail, str):
        exc.detail = redact_paths(exc.detail)
    return await http_exception_handler(request, exc)


def create_app(settings: Settings) -> FastAPI:
    """The app over ``settings.db``; the index is opened at startup and closed at shutdown."""
    web_dir = settings.server.web_dir or default_web_dir()
    state = AppState(settings, web_dir)
    app = FastAPI(
        title="TruthBase",
        version=package_version(),
        description="Verifiable question answering over PDFs: every citation opens on the exact "
        "supporting passage.",
        lifespan=_lifespan(state),
        # /docs is Swagger UI from web/node_modules (no CDN script on our origin): pages.mount_web.
        docs_url=None,
        redoc_url=None,
    )
    app.state.truthbase = state
    _add_middleware(app, state)
    app.add_exception_handler(TruthBaseError, _truthbase_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    for module in (
        documents,
        epub_routes,
        exports,
        auth,
        admin,
        library_routes,
        feedback,
        collections,
        threads,
        shares,
    ):
        app.include_router(module.router)
    if settings.telemetry.metrics:
        app.include_router(metrics_router)
    app.include_router(chat.router)
    mount_web(app, web_dir)
    declare_error_responses(app)
    return app
