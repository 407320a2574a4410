"""The export routes (a router): a stored answer, or a saved thread's answers in order, as
Markdown or one HTML evidence report, as a download; and the re-check of such a report sent
back (what ``truthbase verify --report`` prints). Who may export or re-check what is the
application's (:meth:`truthbase.app.Service.export_answers`,
:meth:`~truthbase.app.Service.export_thread`, :meth:`~truthbase.app.Service.verify_report`);
these routes translate."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..app.exports import MAX_REPORT_BYTES, REPORT_MEDIA_TYPES, ExportFile
from ..errors import InvalidInput
from .deps import CurrentService
from .schemas import AnswerId

__all__ = ["EXPORT_ROUTES", "router"]

#: This router's routes, for :data:`truthbase.server.ROUTES`.
EXPORT_ROUTES = (
    "GET /api/answers/{answer_id}/export",
    "GET /api/threads/{thread_id}/export",
    "POST /api/reports/verify",
)

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
    answer_id: AnswerId,
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


_TOO_LARGE = f"the report is larger than {MAX_REPORT_BYTES} bytes"


async def _report_text(request: Request) -> str:
    """The request's body as the report's text: 415 for a media type a report is not sent as,
    413 past :data:`~truthbase.app.exports.MAX_REPORT_BYTES` (read no further), 422 for bytes
    that are not UTF-8."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media not in REPORT_MEDIA_TYPES:
        raise HTTPException(
            415,
            "send the exported report as the body, with Content-Type text/html (or "
            f"text/markdown, text/plain), not {media or 'no type'}",
        )
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_REPORT_BYTES):
        raise HTTPException(413, _TOO_LARGE)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REPORT_BYTES:
            raise HTTPException(413, _TOO_LARGE)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(422, "the report is not UTF-8 text") from None


@router.post(
    "/api/reports/verify",
    tags=["answers"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "An exported evidence report, as the export wrote it.",
            "content": {
                "text/html": {"schema": {"type": "string"}},
                "text/markdown": {"schema": {"type": "string"}},
            },
        }
    },
)
async def verify_report(request: Request, service: CurrentService) -> dict[str, Any]:
    """Re-check an exported evidence report (its file as the body) against this index, as
    `truthbase verify --report FILE` does: each citation the report shows on its page must
    still be in the page text at its span, and each cited document (by sha256) still in the
    index. ``ok`` false lists in ``problems`` what no longer holds (answer id, n, document,
    page, why). For those who see every document (403 otherwise); 413 over the size limit, 415
    for another media type, 422 for a file that is not a report."""
    text = await _report_text(request)
    try:
        check = await run_in_threadpool(service.verify_report, text)
    except InvalidInput as exc:
        raise HTTPException(422, str(exc)) from None
    data: dict[str, Any] = check.to_json()
    return data
