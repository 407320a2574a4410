"""The server's observability edge: a request id on every request (and log line), one span and
one latency observation per request, and ``GET /metrics`` (Prometheus text format).

:class:`Observe` is the outermost middleware: it takes the client's ``X-Request-ID`` when it is
a short token (letters, digits, ``._-``, at most 64) and makes one otherwise, sets it for the
request's logs (:data:`truthbase.telemetry.REQUEST_ID`, which Starlette's thread pool copies
into every worker thread), echoes it in the response's ``X-Request-ID`` header, opens the
request's server span (``POST /api/chat``: the route template, never the raw path, so that
neither the span names nor the metric labels grow with ids in URLs) and, at the end of the
body, counts the request and its latency and writes one access line (logger
``truthbase.access``).

``/metrics`` is for admins and for scrapers on the same host: a signed-in admin (or the single
local user), or a client on a loopback address whose request came through no proxy (no
``X-Forwarded-For``/``Forwarded`` header); anyone else gets 403.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from opentelemetry.trace import SpanKind
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access import sees_everything
from ..app.viewers import is_loopback
from ..people import Viewer
from ..store import Jobs
from ..telemetry import JOB_QUEUE, REGISTRY, REQUEST_ID, observe_request, tracer
from .deps import CurrentState

__all__ = ["METRICS_ROUTE", "Observe", "metrics_router"]

METRICS_ROUTE = "GET /metrics"

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
#: Jobs looked at for the queue depth: the newest ones (queued jobs are among the newest).
_JOBS_SCANNED = 1000

access_log = logging.getLogger("truthbase.access")


def request_id_of(value: str | None) -> str:
    """The client's request id when it is a safe short token, else a new one."""
    if value and _REQUEST_ID.match(value):
        return value
    return uuid.uuid4().hex


def _route(scope: Scope) -> str:
    """The matched route's template (``/api/documents/{doc_id}/file``), the mount for static
    files, or ``unmatched``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    root = scope.get("root_path") or ""
    if root:
        return f"{root}/*"
    return "unmatched"


class Observe:
    """ASGI middleware: request id, request span, request metrics, access log (see above)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        rid = request_id_of(headers.get(b"x-request-id", b"").decode("latin-1") or None)
        token = REQUEST_ID.set(rid)
        method = str(scope.get("method", "GET"))
        status = 500
        started = time.perf_counter()

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", rid.encode("latin-1")),
                ]
            await send(message)

        with tracer().start_as_current_span(
            f"{method} {scope.get('path', '')}", kind=SpanKind.SERVER
        ) as current:
            try:
                await self.app(scope, receive, sent)
            finally:
                route = _route(scope)
                seconds = time.perf_counter() - started
                current.update_name(f"{method} {route}")
                current.set_attribute("http.request.method", method)
                current.set_attribute("http.route", route)
                current.set_attribute("http.response.status_code", status)
                current.set_attribute("truthbase.request_id", rid)
                observe_request(route, method, status, seconds)
                access_log.info(
                    "%s %s %d %.1f ms", method, scope.get("path", ""), status, seconds * 1000
                )
                REQUEST_ID.reset(token)


def _proxied(request: Request) -> bool:
    return "x-forwarded-for" in request.headers or "forwarded" in request.headers


def may_scrape(request: Request) -> bool:
    """An admin (or the single local user), or a loopback client through no proxy."""
    viewer: Any = getattr(request.state, "viewer", None)
    if isinstance(viewer, Viewer) and sees_everything(viewer):
        return True
    client = request.client.host if request.client else ""
    return is_loopback(client) and not _proxied(request)


def queue_depth(store: Jobs) -> dict[str, int]:
    """Jobs queued and running among the newest :data:`_JOBS_SCANNED`."""
    depth = {"queued": 0, "running": 0}
    for job in store.jobs(limit=_JOBS_SCANNED):
        if job.state in depth:
            depth[job.state] += 1
    return depth


#: ``GET /metrics``, included when ``telemetry.metrics`` is on.
metrics_router = APIRouter()


@metrics_router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, state: CurrentState) -> Response:
    """Prometheus metrics: requests and latency per route, stage latency, model tokens,
    the ingest job queue."""
    if not may_scrape(request):
        raise HTTPException(403, "metrics: admins or loopback clients only")
    depth = await run_in_threadpool(queue_depth, state.store)
    for job_state, count in depth.items():
        JOB_QUEUE.labels(job_state).set(count)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
