"""The chat route (a router): one answer as server-sent events. What is answered, from what,
for whom, and what they are shown of it is the application's (:class:`truthbase.app.Service`);
this route adds what is the HTTP server's own: the chat slots of the process
(:mod:`.chat_limits`) and the event stream that notices the client going away."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from ..app import AnswerPlan, Service
from .chat_limits import ChatStream, Slots
from .deps import ClientAddress, CurrentService, CurrentState
from .schemas import ChatIn

__all__ = ["router"]

router = APIRouter()


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _chat_events(service: Service, plan: AnswerPlan, cancelled: threading.Event) -> Iterator[bytes]:
    """The chat's server-sent events; runs in the thread pool one step at a time. The service
    records the answer and decides what the viewer is shown of each event (only an admin sees
    model endpoints and provider errors). ``cancelled`` set (the client went away) stops agent
    mode before its next model call."""
    for event in service.answer(plan, cancelled=cancelled.is_set):
        yield _sse(*service.shown(event))


@router.post(
    "/api/chat",
    tags=["chat"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def chat(
    body: ChatIn, service: CurrentService, state: CurrentState, address: ClientAddress
) -> StreamingResponse:
    """One answer as server-sent events: ``sources`` (with spans and rects) first, then
    ``token``s, then ``citations`` (verified spans with rects), then ``done`` or ``error``.
    Each event's data is JSON with a ``type`` field equal to the event name. With ``history``
    (the thread's earlier turns) the question is resolved against them first, and ``done``
    carries ``searched_for`` (what was searched) and ``resolution`` (how, and why). With
    ``thread`` (one of the caller's saved threads) the history is that thread's stored turns;
    the answer is kept in it, or, without ``thread`` and ``history``, in a new one, and
    ``done`` carries ``thread`` (its id).

    Refused with 429 and ``Retry-After`` (before any model call) when the caller's quota
    (a signed-in user's by name; the anonymous local mode's by client address) or the
    global one is spent; agent mode also counts against ``quota.agent_per_day``.

    Refused before anything runs: 400 for ``llm`` without an LLM configured; 403 for
    agent mode when ``server.agent_mode`` keeps it for admins; 404 for a ``doc`` (or one of
    ``documents``, or a ``collection``) the caller may not see; 400 for a scope with no
    document left; 503 with ``Retry-After`` when the process already runs
    ``server.max_concurrent_chats`` chats (``max_concurrent_agent`` in agent mode). A client
    that goes away stops agent mode before its next model call."""
    plan = await run_in_threadpool(
        service.plan_answer,
        body.question,
        mode=body.mode,
        doc=body.doc,
        documents=body.documents,
        collection=body.collection,
        k=state.settings.server.sources,
        history=body.turns(),
        thread=body.thread,
        keep=not body.history,  # a client that keeps its own history keeps its own thread
    )
    release = state.slots.take(plan.mode == "agent")
    if release is None:
        raise HTTPException(
            503,
            "the server is answering as many chats as it may at once: try again shortly",
            headers={"Retry-After": str(Slots.RETRY_AFTER_S)},
        )
    try:
        await run_in_threadpool(service.admit_answer, plan, address)
    except BaseException:
        release()
        raise
    gone = threading.Event()

    async def stream() -> AsyncIterator[bytes]:
        async for chunk in iterate_in_threadpool(_chat_events(service, plan, gone)):
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
