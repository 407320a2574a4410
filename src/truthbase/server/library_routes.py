"""The library's routes: upload, list, rename, change visibility, re-ingest, delete, and the
ingest jobs (a list and a live stream of server-sent events).

Who may do what is :mod:`truthbase.access`'s: a document the viewer may not see is a 404 here
as everywhere; one they may see but not manage (another user's shared document) is a 403 for
the changes only (they know it exists). The viewer comes from :func:`viewer_of`: what the
authentication layer put on the request, or the single local user (:data:`OPERATOR`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..access import may_manage, may_see, sees_everything
from ..app.lifecycle import visible_jobs
from ..app.uploads import MAX_FILES
from ..config import data_folder
from ..errors import InvalidInput
from ..jobs import LimitExceeded
from ..model import DocumentInfo, listed_titles
from ..people import Viewer
from ..store import Store
from .deps import CurrentService, CurrentState, CurrentViewer
from .documents import SHA256_HEX
from .uploads import receive_files

__all__ = ["LIBRARY_ROUTES", "router"]

LIBRARY_ROUTES = (
    "GET /library",
    "GET /api/library",
    "POST /api/documents",
    "PATCH /api/documents/{doc_id}",
    "DELETE /api/documents/{doc_id}",
    "POST /api/documents/{doc_id}/reingest",
    "GET /api/jobs",
    "GET /api/jobs/events",
)

#: Multipart framing allowed beyond the files themselves (boundaries, headers, a field).
_BODY_SLACK = 64 * 1024
#: Seconds between two looks at the jobs table for the event stream.
_EVENTS_POLL_S = 0.5
#: Seconds between keep-alive comments on an idle event stream.
_KEEPALIVE_S = 15.0


class LibraryDocumentOut(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    display_title: str = Field(
        description="The title as the list shows it: followed by the file name where several "
        "of the listed documents share the title."
    )
    kind: str
    pages: int
    chunks: int
    language: str | None = Field(description="The document's language, where known.")
    text_source: str | None = Field(description="pdf, ocr or mixed, where known.")
    owner: str | None = Field(description="The owner's user name; None: the operator.")
    visibility: str
    ingested_at: str
    status: str = Field(description="ready, or the state of a job re-ingesting it.")
    contains_instructions: bool = Field(
        description="The prompt-injection screen found text addressed to a model."
    )
    instruction_hits: list[dict[str, Any]] = Field(description="The screen's first hits.")
    can_manage: bool = Field(description="Rename, share, re-ingest, delete: its owner, an admin.")
    held: bool = Field(
        description="The viewer holds someone else's private copy: they may let go of it (delete)."
    )
    file_url: str


class DocumentPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=1, max_length=300)
    visibility: Literal["private", "shared"] | None = None


def _text_source(store: Store, info: DocumentInfo) -> str | None:
    if info.kind == "epub":
        return "epub"
    return "pdf"  # OCR'd pages (issue 14) say otherwise once the units record it


def _shown_owner(viewer: Viewer, document: DocumentInfo) -> str | None:
    """A holder of someone else's private document sees it as their own: no other name."""
    if sees_everything(viewer) or document.visibility == "shared":
        return document.owner_name
    return viewer.user


def _library_rows(store: Store, viewer: Viewer) -> list[LibraryDocumentOut]:
    documents = [d for d in store.list_documents() if may_see(viewer, d)]
    flagged = store.flagged_documents()
    running = {
        j.sha256: j.state
        for j in reversed(visible_jobs(store, viewer))
        if j.state in ("queued", "running")
    }
    labels = listed_titles(documents)
    rows = []
    for d in documents:
        screen = flagged.get(d.id)
        rows.append(
            LibraryDocumentOut(
                id=d.id,
                title=d.title,
                display_title=labels[d.id],
                kind=d.kind,
                pages=d.unit_count,
                chunks=d.chunk_count,
                language=None,
                text_source=_text_source(store, d),
                owner=_shown_owner(viewer, d),
                visibility=d.visibility,
                ingested_at=d.ingested_at,
                status=running.get(d.id, "ready"),
                contains_instructions=screen is not None,
                instruction_hits=[h.to_json() for h in screen.hits[:5]] if screen else [],
                can_manage=may_manage(viewer, d),
                held=viewer.user_id is not None and viewer.user_id in d.holders,
                file_url=f"/api/documents/{d.id}/file",
            )
        )
    return rows


# The body is streamed by hand (uploads.receive_files): declared here for /openapi.json.
_UPLOAD_OPENAPI: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "visibility": {"type": "string", "enum": ["private", "shared"]},
                    },
                    "required": ["file"],
                }
            }
        },
    }
}


router = APIRouter()


@router.get("/api/library", response_model=list[LibraryDocumentOut], tags=["library"])
async def library(state: CurrentState, viewer: CurrentViewer) -> list[LibraryDocumentOut]:
    """The documents the viewer may see, with owner, visibility, status and the
    prompt-injection flag."""
    return await run_in_threadpool(_library_rows, state.store, viewer)


@router.post("/api/documents", status_code=202, tags=["library"], openapi_extra=_UPLOAD_OPENAPI)
async def upload(request: Request, state: CurrentState, service: CurrentService) -> JSONResponse:
    """Upload PDF or EPUB files (``multipart/form-data``, one or more file fields, an
    optional ``visibility`` field: private (default for users) or shared). Each file
    becomes an ingest job; 202 with the jobs. 413 for a file over the size limit or the
    bytes a user may hold, 429 past the uploads per day."""
    data_dir = data_folder(service.settings)
    limit = service.settings.library.max_file_bytes
    declared = request.headers.get("content-length")
    body_limit = limit * MAX_FILES + _BODY_SLACK
    if declared is not None and declared.isdigit() and int(declared) > body_limit:
        raise HTTPException(413, f"the upload is larger than the limit of {limit} bytes a file")
    try:
        received = await receive_files(
            request.headers.get("content-type"), request.stream(), data_dir, limit
        )
    except LimitExceeded as exc:
        raise HTTPException(413, str(exc)) from exc
    try:
        result = await run_in_threadpool(
            partial(service.upload, received.files, visibility=received.fields.get("visibility"))
        )
    except InvalidInput as exc:  # the visibility field: a form field's value, as FastAPI's own
        raise HTTPException(422, str(exc)) from exc
    queued = [job.to_json() for job in result.jobs]
    if result.refused is not None:
        status = 429 if result.refused.limit == "files_per_day" else 413
        body = {"detail": str(result.refused), "limit": result.refused.limit, "jobs": queued}
        return JSONResponse(body, status_code=status)
    state.wake_workers()
    return JSONResponse({"jobs": queued}, status_code=202)


@router.patch("/api/documents/{doc_id}", tags=["library"])
async def change(
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    body: DocumentPatch,
    service: CurrentService,
) -> LibraryDocumentOut:
    """Rename a document and/or change its visibility (its owner or an admin)."""

    def run() -> LibraryDocumentOut:
        service.change_document(doc_id, title=body.title, visibility=body.visibility)
        rows = _library_rows(service.store, service.viewer)
        return next(r for r in rows if r.id == doc_id)

    return await run_in_threadpool(run)


@router.delete("/api/documents/{doc_id}", tags=["library"])
async def delete(
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)], service: CurrentService
) -> dict[str, Any]:
    """Delete a document: its units, chunks, vectors, token signs, segments and uploaded
    file, in one transaction; stored answers that cited it keep their text. One document
    per content: a user who holds another's private document lets go of their hold, and an
    owner whose document others hold leaves it to them (the first holder owns it)."""
    await run_in_threadpool(service.delete_document, doc_id)
    return {"deleted": doc_id}


@router.post("/api/documents/{doc_id}/reingest", status_code=202, tags=["library"])
async def reingest(
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    service: CurrentService,
    state: CurrentState,
) -> dict[str, Any]:
    """Ingest a document again from its stored file (a new extractor, new settings): a
    job that replaces it in one transaction, keeping its title, owner and visibility."""
    job = await run_in_threadpool(service.reingest_document, doc_id)
    state.wake_workers()
    return {"jobs": [job.to_json()]}


@router.get("/api/jobs", tags=["library"])
async def jobs(service: CurrentService) -> dict[str, Any]:
    """The viewer's ingest jobs (an admin's or the local user's: everyone's), newest
    first."""
    listed = await run_in_threadpool(service.jobs)
    return {"jobs": [j.to_json() for j in listed]}


@router.get(
    "/api/jobs/events",
    tags=["library"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def job_events(request: Request, service: CurrentService) -> StreamingResponse:
    """Server-sent events: a ``jobs`` event with the viewer's jobs now, then one whenever
    any of them changes (state, stage, pages), from whichever worker."""

    async def stream() -> AsyncIterator[bytes]:
        last: str | None = None
        quiet = 0.0
        while not await request.is_disconnected():
            listed = await run_in_threadpool(service.jobs)
            body = json.dumps({"type": "jobs", "jobs": [j.to_json() for j in listed]})
            if body != last:
                last, quiet = body, 0.0
                yield f"event: jobs\ndata: {body}\n\n".encode()
            elif quiet >= _KEEPALIVE_S:
                quiet = 0.0
                yield b": keep-alive\n\n"
            await asyncio.sleep(_EVENTS_POLL_S)
            quiet += _EVENTS_POLL_S

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
