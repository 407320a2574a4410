"""The saved threads' routes (a router): list and search, open (each citation checked again),
rename and delete one's own threads; an admin's counts per user. Whose thread is whose, and what
an admin may see, is the application's (:mod:`truthbase.app.threads`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from starlette.concurrency import run_in_threadpool

from .deps import CurrentService
from .schemas import ThreadRenameIn

__all__ = ["THREAD_ROUTES", "router"]

router = APIRouter()

#: This router's routes, for :data:`truthbase.server.ROUTES`.
THREAD_ROUTES = (
    "GET /api/threads",
    "GET /api/threads/{thread_id}",
    "PATCH /api/threads/{thread_id}",
    "DELETE /api/threads/{thread_id}",
    "GET /api/admin/threads",
)

#: A thread id as the application makes them (:func:`truthbase.app.threads.new_thread`).
ThreadId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")]


@router.get("/api/threads", tags=["threads"])
async def list_threads(
    service: CurrentService,
    q: Annotated[str | None, Query(max_length=1000)] = None,
) -> dict[str, Any]:
    """The caller's saved threads, newest first (``q``: only those whose questions or answers
    hold, for each of its words, a word that begins with it, case-folded:
    :func:`truthbase.turns.search_terms`)."""
    found = await run_in_threadpool(service.threads, q)
    return {"threads": [t.to_json() for t in found]}


@router.get("/api/threads/{thread_id}", tags=["threads"])
async def get_thread(service: CurrentService, thread_id: ThreadId) -> dict[str, Any]:
    """One of the caller's threads with every turn's answer as it was shown; each citation
    carries ``recheck``: its ``state`` now (current, changed, deleted, hidden, unchecked) and
    the ``reason``. Anyone else's thread is 404, as a missing one."""
    opened = await run_in_threadpool(service.thread, thread_id)
    data: dict[str, Any] = opened.to_json()
    return data


@router.patch("/api/threads/{thread_id}", tags=["threads"])
async def rename_thread(
    service: CurrentService, thread_id: ThreadId, body: ThreadRenameIn
) -> dict[str, Any]:
    """A new title for one of the caller's threads."""
    info = await run_in_threadpool(service.rename_thread, thread_id, body.title)
    return info.to_json()


@router.delete("/api/threads/{thread_id}", tags=["threads"], status_code=204)
async def delete_thread(service: CurrentService, thread_id: ThreadId) -> Response:
    """Delete one of the caller's threads (the answer log keeps its answers)."""
    await run_in_threadpool(service.delete_thread, thread_id)
    return Response(status_code=204)


@router.get("/api/admin/threads", tags=["admin"])
async def thread_counts(service: CurrentService) -> dict[str, Any]:
    """Per user, how many saved threads and turns (admins only; never their contents)."""
    counts = await run_in_threadpool(service.thread_counts)
    return {"users": [c.to_json() for c in counts]}
