"""The shared threads' routes (a router): make and revoke a saved thread's read-only link, and
open one. Who may share, revoke and open, and what a link that may not open answers, is the
application's (:mod:`truthbase.app.shares`); the chat page opens a link at ``/?shared=TOKEN``
(``js/shared.js``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response
from starlette.concurrency import run_in_threadpool

from .deps import CurrentService
from .threads import ThreadId

__all__ = ["SHARE_ROUTES", "router"]

router = APIRouter()

#: This router's routes, for :data:`truthbase.server.ROUTES`.
SHARE_ROUTES = (
    "POST /api/threads/{thread_id}/share",
    "DELETE /api/threads/{thread_id}/share",
    "GET /api/shared/{token}",
)

#: A link's token as the application makes them (``secrets.token_urlsafe``).
ShareToken = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{16,64}$")]


@router.post("/api/threads/{thread_id}/share", tags=["threads"])
async def share_thread(service: CurrentService, thread_id: ThreadId) -> dict[str, Any]:
    """A read-only link to one of the caller's threads: ``token`` and ``url`` (the chat page's
    path that opens it); the open link when the thread has one."""
    share = await run_in_threadpool(service.share_thread, thread_id)
    return share.to_json()


@router.delete("/api/threads/{thread_id}/share", tags=["threads"], status_code=204)
async def revoke_share(service: CurrentService, thread_id: ThreadId) -> Response:
    """Revoke the links of one of the caller's threads: they answer 404 from now on."""
    await run_in_threadpool(service.revoke_share, thread_id)
    return Response(status_code=204)


@router.get("/api/shared/{token}", tags=["threads"])
async def open_shared(service: CurrentService, token: ShareToken) -> dict[str, Any]:
    """The thread a link opens, read-only, as ``GET /api/threads/{thread_id}`` gives it to its
    owner (each citation checked again as the caller may see it), with ``read_only``: true.
    404, with one body, for an unknown or revoked link and for a caller who may not see every
    document the thread shows."""
    opened = await run_in_threadpool(service.shared_thread, token)
    return {**opened.to_json(), "read_only": True}
