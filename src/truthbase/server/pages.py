"""The web app's pages and static files: the chat page, the viewer, the library, the EPUB
reader and /docs (Swagger UI), with pdf.js and swagger-ui-dist from ``web/node_modules``.

Pages are served uncached and carry the security headers the app's middleware adds
(:mod:`.middleware`); the reader page has its own stricter policy (:data:`.reader.READER_PAGE_CSP`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from .reader import READER_PAGE_CSP

__all__ = ["mount_web", "page"]

logger = logging.getLogger(__name__)


def page(web_dir: Path, name: str) -> HTMLResponse:
    """The HTML page ``name`` of ``web_dir``, never cached (a 404 with its name when missing)."""
    path = web_dir / name
    if not path.is_file():
        logger.error("the page %s is missing from %s", name, web_dir)
        raise HTTPException(404, f"the page {name} is not installed")
    return HTMLResponse(path.read_text("utf-8"), headers={"Cache-Control": "no-cache"})


def mount_web(app: FastAPI, web_dir: Path) -> None:
    """The pages, their scripts and styles, Swagger UI and pdf.js, all from ``web_dir``."""

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        """The chat page."""
        return page(web_dir, "index.html")

    @app.get("/view", response_class=HTMLResponse, include_in_schema=False)
    async def view() -> HTMLResponse:
        """The viewer alone: /view?doc=ID&page=N&start=S&end=E[&cstart=&cend=][&zoom=1|fit]
        [&rotation=90]."""
        return page(web_dir, "view.html")

    @app.get("/library", response_class=HTMLResponse, include_in_schema=False)
    async def library_page() -> HTMLResponse:
        """The Library page: upload, jobs, documents."""
        return page(web_dir, "library.html")

    @app.get("/read", response_class=HTMLResponse, include_in_schema=False)
    async def read() -> HTMLResponse:
        """The EPUB reader: /read?doc=ID&unit=N[&start=S&end=E][&cstart=&cend=]."""
        shown = page(web_dir, "read.html")
        shown.headers["Content-Security-Policy"] = READER_PAGE_CSP
        return shown

    for prefix in ("js", "css"):
        folder = web_dir / prefix
        if folder.is_dir():
            app.mount(f"/{prefix}", StaticFiles(directory=folder), name=prefix)

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs() -> HTMLResponse:
        """The OpenAPI document in Swagger UI, served from this origin (swagger-ui-dist)."""
        return page(web_dir, "docs.html")

    swagger = web_dir / "node_modules" / "swagger-ui-dist"
    if swagger.is_dir():
        app.mount("/swagger-ui", StaticFiles(directory=swagger), name="swagger-ui")
    pdfjs = web_dir / "node_modules" / "pdfjs-dist"
    if pdfjs.is_dir():
        app.mount("/pdfjs", StaticFiles(directory=pdfjs), name="pdfjs")
    else:

        @app.get("/pdfjs/{rest:path}", include_in_schema=False)
        async def pdfjs_missing(rest: str) -> None:
            raise HTTPException(
                503, "pdf.js is not installed: run scripts/install-web.sh (npm ci in web/)"
            )
