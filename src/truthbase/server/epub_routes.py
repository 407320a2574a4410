"""The EPUB routes of the app: sections for the reader, their spans as DOM ranges, and the
books' images (see :mod:`.reader` and :mod:`.epub_files`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Protocol
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from ..model import DocumentInfo, DomMap, Unit
from ..store import Store
from .epub_files import BookFileError, BookLayout, book_layout, read_image, resolve_member
from .reader import SECTION_CSP, normalize_href, section_document, span_segments
from .schemas import MAX_INDEX, DomSegmentOut, EpubSpanOut, SectionOut

_SHA256_HEX = r"^[0-9a-f]{64}$"


class _HasStore(Protocol):
    @property
    def store(self) -> Store: ...


class _Books:
    """Per-book facts read once: section hrefs and image layout."""

    def __init__(self, owner: _HasStore, file_matches_index: Callable[[str, Path], bool]) -> None:
        self._owner = owner
        self.file_matches_index = file_matches_index
        self._lock = threading.Lock()
        self._hrefs: dict[str, dict[str, int]] = {}
        self._layouts: dict[str, BookLayout | None] = {}

    @property
    def store(self) -> Store:
        return self._owner.store

    def units_by_href(self, doc_id: str, unit_count: int) -> dict[str, int]:
        """An EPUB's section hrefs (normalized) -> unit index, read once per document."""
        with self._lock:
            cached = self._hrefs.get(doc_id)
        if cached is None:
            cached = {}
            for index in range(unit_count):
                unit = self.store.unit(doc_id, index)
                if unit is not None and unit.href:
                    cached.setdefault(normalize_href(unit.href), index)
            with self._lock:
                self._hrefs[doc_id] = cached
        return cached

    def book_layout(self, doc_id: str, path: Path) -> BookLayout | None:
        """The EPUB's image layout, or None when its file is gone, changed or unreadable."""
        if not path.is_file() or not self.file_matches_index(doc_id, path):
            return None
        with self._lock:
            if doc_id in self._layouts:
                return self._layouts[doc_id]
        try:
            layout: BookLayout | None = book_layout(path)
        except BookFileError:
            layout = None
        with self._lock:
            self._layouts[doc_id] = layout
        return layout


def add_epub_routes(
    app: FastAPI,
    owner: _HasStore,
    file_matches_index: Callable[[str, Path], bool],
    visible: Callable[[Request, str], DocumentInfo],
) -> None:
    """Add the EPUB routes to ``app``; ``owner.store`` is the open index; ``visible`` is the
    document when the request's viewer may see it, NotFound (404) otherwise."""
    state = _Books(owner, file_matches_index)

    def epub_unit(request: Request, doc: str, index: int) -> tuple[DocumentInfo, Unit, DomMap]:
        info = visible(request, doc)
        if info.kind != "epub":
            raise HTTPException(409, f"document {doc} is a {info.kind}, not an EPUB")
        unit = state.store.unit(doc, index)
        if unit is None or unit.dom is None:
            raise HTTPException(404, f"document {doc} has no section {index}")
        return info, unit, unit.dom

    @app.get("/api/epub/sections/{doc_id}/{unit}", response_model=SectionOut, tags=["epub"])
    async def epub_section(
        request: Request,
        doc_id: Annotated[str, PathParam(pattern=_SHA256_HEX)],
        unit: Annotated[
            int, PathParam(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")
        ],
    ) -> SectionOut:
        """One EPUB section's map for the reader: node paths, runs, anchors, neighbours, and
        where its sanitized XHTML is served."""

        def run() -> SectionOut:
            info, u, dom = epub_unit(request, doc_id, unit)
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

    @app.get("/api/epub/sections/{doc_id}/{unit}/xhtml", tags=["epub"], response_class=HTMLResponse)
    async def epub_section_xhtml(
        request: Request,
        doc_id: Annotated[str, PathParam(pattern=_SHA256_HEX)],
        unit: Annotated[
            int, PathParam(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")
        ],
    ) -> Response:
        """The section's sanitized XHTML as the reader renders it: no scripts, no remote
        resources (remote links unlinked, images dropped), under a strict
        Content-Security-Policy. The stored node paths resolve in it."""

        def run() -> str:
            info, u, dom = epub_unit(request, doc_id, unit)
            layout = state.book_layout(doc_id, Path(info.path))
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
                units_by_href=state.units_by_href(doc_id, info.unit_count),
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

    @app.get("/api/epub/images/{doc_id}", tags=["epub"], response_class=Response)
    async def epub_image(
        request: Request,
        doc_id: Annotated[str, PathParam(pattern=_SHA256_HEX)],
        member: Annotated[str, Query(min_length=1, max_length=1000, description="Zip member.")],
    ) -> Response:
        """An image of an ingested EPUB, from the book itself: only raster images (JPEG, PNG,
        GIF, WebP) that its manifest lists, and only while the file still matches its id."""

        def run() -> tuple[bytes, str]:
            info = visible(request, doc_id)
            if info.kind != "epub":
                raise HTTPException(404, f"no EPUB {doc_id}")
            path = Path(info.path)
            layout = state.book_layout(doc_id, path)
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

    @app.get("/api/epub/spans", response_model=EpubSpanOut, tags=["epub"])
    async def epub_span(
        request: Request,
        doc: Annotated[str, Query(pattern=_SHA256_HEX, description="Document id.")],
        unit: Annotated[
            int, Query(ge=0, le=MAX_INDEX, description="0-based unit (spine item) index.")
        ],
        start: Annotated[
            int, Query(ge=0, le=MAX_INDEX, description="Offset into the section's text.")
        ],
        end: Annotated[int, Query(ge=0, le=MAX_INDEX, description="End offset (exclusive).")],
    ) -> EpubSpanOut:
        """A span of an EPUB section as DOM ranges (text-node paths + code-point offsets)."""

        def run() -> EpubSpanOut:
            info, u, dom = epub_unit(request, doc, unit)
            if not start <= end <= len(u.text):
                raise HTTPException(
                    422, f"span [{start}, {end}) outside section text of length {len(u.text)}"
                )
            return EpubSpanOut(
                doc=doc,
                title=info.title,
                unit=unit,
                unit_count=info.unit_count,
                href=u.href,
                label=u.label,
                start=start,
                end=end,
                text=u.text[start:end],
                segments=[
                    DomSegmentOut(path=list(s.path), start=s.start, end=s.end)
                    for s in span_segments(dom, start, end)
                ],
            )

        return await run_in_threadpool(run)
