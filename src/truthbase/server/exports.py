"""The export routes (a router): a stored answer, or a saved thread's answers in order, as
Markdown or one HTML evidence report, as a download. Who may export what is the application's
(:meth:`truthbase.app.Service.export_answers`, :meth:`~truthbase.app.Service.export_thread`);
these routes translate."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..app.exports import ExportFile
from .deps import CurrentService

__all__ = ["router"]

router = APIRouter()

#: What both export routes answer, and the format they take.
_EXPORT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/markdown": {}, "text/html": {}},
        "description": "The export, as an attachment.",
    }
}
ExportFormat = Annotated[
    Literal["md", "html"],
    Query(
        alias="format",
        description="md: Markdown, a footnote per citation; html: an evidence report.",
    ),
]


@router.get(
    "/api/answers/{answer_id}/export",
    tags=["answers"],
    response_class=Response,
    responses=_EXPORT_RESPONSES,
)
async def export_answer(
    request: Request,
    service: CurrentService,
    answer_id: Annotated[int, PathParam(ge=1, description="The answer's id (`done` carries it).")],
    fmt: ExportFormat = "html",
) -> Response:
    """A stored answer as Markdown (each citation a footnote with its quote, document, pages,
    sha256, span, state and a link that opens the highlight) or as one self-contained HTML
    evidence report (each cited region rendered with its highlight, opens offline with no
    script; `truthbase verify --report` re-checks it). 404 for an answer that cites a document
    the viewer may not see, as for a missing one."""
    base_url = service.settings.server.base_url or str(request.base_url)
    exported = await run_in_threadpool(service.export_answers, [answer_id], fmt, base_url=base_url)
    return _download(exported)


@router.get(
    "/api/threads/{thread_id}/export",
    tags=["threads"],
    response_class=Response,
    responses=_EXPORT_RESPONSES,
)
async def export_thread(
    request: Request,
    service: CurrentService,
    thread_id: Annotated[str, PathParam(max_length=64, description="A saved thread's id.")],
    fmt: ExportFormat = "html",
) -> Response:
    """One of the caller's saved threads, every answer in order, as the answer export writes
    them (footnotes kept apart per answer). 404 for another user's thread, as for a missing
    one; 400 for a thread with no stored answer."""
    base_url = service.settings.server.base_url or str(request.base_url)
    exported = await run_in_threadpool(service.export_thread, thread_id, fmt, base_url=base_url)
    return _download(exported)


def _download(exported: ExportFile) -> Response:
    return Response(
        exported.content,
        media_type=exported.media_type,
        headers={"Content-Disposition": f'attachment; filename="{exported.filename}"'},
    )
