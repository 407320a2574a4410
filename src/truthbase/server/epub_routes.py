"""The EPUB routes of the app (a router): sections for the reader, their spans as DOM ranges,
and the books' images (see :mod:`.reader`, :mod:`.epub_files` and :mod:`.books`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from ..app import Service
from ..errors import InvalidInput
from ..model import DocumentInfo, DomMap, Unit
from ..records import MAX_INDEX
from .deps import CurrentService, CurrentState
from .documents import SHA256_HEX
from .epub_files import BookFileError, read_image, resolve_member
from .reader import SECTION_CSP, section_document, span_segments
from .schemas import DomSegmentOut, EpubSpanOut, SectionOut

__all__ = ["router"]


router = APIRouter()


def _epub_unit(service: Service, doc: str, index: int) -> tuple[DocumentInfo, Unit, DomMap]:
    section = service.unit(doc, index, kind="epub")
    assert section.unit.dom is not None  # read_unit's rule for an EPUB section
    return section.document, section.unit, section.unit.dom


@router.get("/api/epub/sections/{doc_id}/{unit}", response_model=SectionOut, tags=["epub"])
async def epub_section(
    service: CurrentService,
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    unit: Annotated[
        int, PathParam(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")
    ],
) -> SectionOut:
    """One EPUB section's map for the reader: node paths, runs, anchors, neighbours, and
    where its sanitized XHTML is served."""

    def run() -> SectionOut:
        info, u, dom = _epub_unit(service, doc_id, unit)
        return SectionOut(
            doc=doc_id,
            title=info.title,
            unit=unit,
            unit_count=info.unit_count,
            href=u.href,
            label=u.label,
            linear=dom.linear,
            prev=unit - 1 if unit > 0 else None,
            next=unit + 1 if unit + 1 < info.unit_count else None,
            text_length=len(u.text),
            html_url=f"/api/epub/sections/{doc_id}/{unit}/xhtml",
            nodes=[list(p) for p in dom.nodes],
            runs=[list(r) for r in dom.runs],
            anchors=dom.anchors,
        )

    return await run_in_threadpool(run)


@router.get("/api/epub/sections/{doc_id}/{unit}/xhtml", tags=["epub"], response_class=HTMLResponse)
async def epub_section_xhtml(
    service: CurrentService,
    state: CurrentState,
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    unit: Annotated[
        int, PathParam(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")
    ],
) -> Response:
    """The section's sanitized XHTML as the reader renders it: no scripts, no remote
    resources (remote links unlinked, images dropped), under a strict
    Content-Security-Policy. The stored node paths resolve in it."""

    def run() -> str:
        info, u, dom = _epub_unit(service, doc_id, unit)
        layout = state.books.book_layout(doc_id, Path(info.path))
        image_url = None
        if layout is not None and u.href:
            images, base = layout.images, layout.member(u.href)

            def image_url(src: str) -> str | None:
                member = resolve_member(base, src)
                if member not in images:
                    return None
                return f"/api/epub/images/{doc_id}?member={quote(member)}"

        return section_document(
            dom.html,
            doc_id=doc_id,
            unit_href=u.href or "",
            units_by_href=state.books.units_by_href(doc_id, info.unit_count),
            image_url=image_url,
        )

    body = await run_in_threadpool(run)
    return Response(
        body,
        media_type="text/html; charset=utf-8",
        headers={
            "Content-Security-Policy": SECTION_CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        },
    )


@router.get("/api/epub/images/{doc_id}", tags=["epub"], response_class=Response)
async def epub_image(
    service: CurrentService,
    state: CurrentState,
    doc_id: Annotated[str, PathParam(pattern=SHA256_HEX)],
    member: Annotated[str, Query(min_length=1, max_length=1000, description="Zip member.")],
) -> Response:
    """An image of an ingested EPUB, from the book itself: only raster images (JPEG, PNG,
    GIF, WebP) that its manifest lists, and only while the file still matches its id."""

    def run() -> tuple[bytes, str]:
        info = service.visible(doc_id)
        if info.kind != "epub":
            raise HTTPException(404, f"no EPUB {doc_id}")
        path = Path(info.path)
        layout = state.books.book_layout(doc_id, path)
        if layout is None:
            raise HTTPException(404, f"the file of {doc_id} is gone or changed since ingest")
        try:
            return read_image(path, layout, member)
        except BookFileError as exc:
            raise HTTPException(404, str(exc)) from exc

    data, media = await run_in_threadpool(run)
    return Response(
        data,
        media_type=media,
        headers={
            "Content-Security-Policy": "default-src 'none'",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, max-age=3600",
        },
    )


@router.get("/api/epub/spans", response_model=EpubSpanOut, tags=["epub"])
async def epub_span(
    service: CurrentService,
    doc: Annotated[str, Query(pattern=SHA256_HEX, description="Document id.")],
    unit: Annotated[int, Query(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")],
    start: Annotated[int, Query(ge=0, le=MAX_INDEX, description="Offset into the section's text.")],
    end: Annotated[int, Query(ge=0, le=MAX_INDEX, description="End offset (exclusive).")],
) -> EpubSpanOut:
    """A span of an EPUB section as DOM ranges (text-node paths + code-point offsets)."""

    def run() -> EpubSpanOut:
        try:
            read = service.span(doc, unit, start, end, kind="epub")
        except InvalidInput as exc:  # a span out of range: a query value, as FastAPI's own
            raise HTTPException(422, str(exc)) from exc
        assert read.unit.dom is not None  # read_unit's rule for an EPUB section
        return EpubSpanOut(
            doc=doc,
            title=read.document.title,
            unit=unit,
            unit_count=read.document.unit_count,
            href=read.unit.href,
            label=read.unit.label,
            start=start,
            end=end,
            text=read.text,
            segments=[
                DomSegmentOut(path=list(s.path), start=s.start, end=s.end)
                for s in span_segments(read.unit.dom, start, end)
            ],
        )

    return await run_in_threadpool(run)
