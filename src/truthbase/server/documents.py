"""The reading routes of the app (a router): liveness, the documents, a document's file,
search, and any span of a page. What a viewer may read is the application's
(:class:`truthbase.app.Service`); these routes translate."""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from ..access import may_see
from ..config import DEFAULT_K
from ..errors import InvalidInput
from ..geometry import span_line_rects
from ..model import listed_titles
from ..people import Viewer
from ..records import MAX_INDEX, MAX_QUESTION_CHARS
from .deps import ClientAddress, CurrentService, CurrentState
from .schemas import (
    DocumentOut,
    GeometryOut,
    HealthOut,
    SearchHitOut,
    SearchOut,
    SpanOut,
)

__all__ = ["SHA256_HEX", "package_version", "router"]

#: A document id in a path or query: the sha256 of its bytes.
SHA256_HEX = r"^[0-9a-f]{64}$"

logger = logging.getLogger(__name__)

router = APIRouter()


def package_version() -> str:
    try:
        return version("truthbase")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "0+unknown"


@router.get("/healthz", response_model=HealthOut, tags=["meta"])
async def healthz(request: Request, state: CurrentState) -> HealthOut:
    """Liveness; open without a login, when it leaves the document count out."""
    viewer = getattr(request.state, "viewer", None)  # None: not signed in (no count then)
    count: int | None = None
    if isinstance(viewer, Viewer):
        documents = await run_in_threadpool(state.store.list_documents)
        count = sum(1 for d in documents if may_see(viewer, d))
    return HealthOut(status="ok", documents=count, version=package_version())


@router.get("/api/documents", response_model=list[DocumentOut], tags=["documents"])
async def list_documents(service: CurrentService) -> list[DocumentOut]:
    """The ingested documents the caller may see."""
    documents = await run_in_threadpool(service.documents)
    labels = listed_titles(documents)
    return [DocumentOut.of(d, labels[d.id]) for d in documents]


@router.get("/api/documents/{doc_id}/file", tags=["documents"], response_class=FileResponse)
async def document_file(
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    service: CurrentService,
    state: CurrentState,
) -> FileResponse:
    """The bytes of an ingested document, looked up by id (never by a path from the request),
    served only while they still hash to the id: 404 when the file is gone, 409 when it
    changed since ingest or is now a symbolic link (re-ingest it)."""
    info = await run_in_threadpool(service.visible, doc_id)
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


@router.get("/api/search", response_model=SearchOut, tags=["search"])
async def search_route(
    service: CurrentService,
    address: ClientAddress,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUESTION_CHARS, description="The query.")],
    k: Annotated[int, Query(ge=1, le=100, description="Results.")] = DEFAULT_K,
    documents: Annotated[
        list[str] | None,
        Query(max_length=2000, description="Only these documents (ids or unique prefixes)."),
    ] = None,
    collection: Annotated[
        str | None,
        Query(min_length=1, max_length=100, description="Only the caller's collection."),
    ] = None,
) -> SearchOut:
    """Hybrid search (full text + dense, fused): ranked chunks with their rects, from the
    documents the caller may see (filtered inside each retrieval arm), and of those only the
    ``documents`` and ``collection`` asked for, when any (404 for one the caller may not see,
    400 for a scope left empty)."""
    hits = await run_in_threadpool(
        service.search,
        q,
        k=k,
        documents=documents or (),
        collection=collection,
        address=address,
    )
    return SearchOut(query=q, results=[SearchHitOut.of(h, i) for i, h in enumerate(hits, 1)])


@router.get("/api/spans", response_model=SpanOut, tags=["documents"])
async def span(
    service: CurrentService,
    state: CurrentState,
    doc: Annotated[str, Query(pattern=SHA256_HEX, description="Document id.")],
    page: Annotated[int, Query(ge=1, le=MAX_INDEX, description="1-based page.")],
    start: Annotated[int, Query(ge=0, le=MAX_INDEX, description="Offset into the page's text.")],
    end: Annotated[int, Query(ge=0, le=MAX_INDEX, description="End offset (exclusive).")],
) -> SpanOut:
    """The rects of any span of a page's canonical text, with the page geometry."""

    def run() -> SpanOut:
        try:
            read = service.span(doc, page - 1, start, end)
        except InvalidInput as exc:  # a span out of range: a query value, as FastAPI's own
            raise HTTPException(422, str(exc)) from exc
        info, unit = read.document, read.unit
        matches: bool | None = None
        if unit.text_source == "ocr":
            matches = state.file_matches_index(doc, Path(info.path))
        return SpanOut(
            doc=doc,
            title=info.title,
            page=page,
            unit=unit.index,
            page_count=info.unit_count,
            start=start,
            end=end,
            text=read.text,
            rects=span_line_rects(unit.text, unit.boxes, start, end),
            geometry=GeometryOut.of(unit.geometry) if unit.geometry else None,
            page_text=unit.text,
            label=unit.label,
            text_source=unit.text_source,
            file_matches=matches,
        )

    return await run_in_threadpool(run)
