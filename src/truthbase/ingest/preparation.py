"""The one way a file becomes what the store writes: extract (under the OCR settings, always),
screen for prompt injection (always), chunk and embed. The CLI, :class:`truthbase.api.Library`,
the process pool and the job worker all call :func:`prepare`; only the store write
(:func:`truthbase.ingest.write_document`) is left to them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..config import OcrSettings
from ..embed import Embedder
from ..extract import ExtractionError, OcrEngine, OcrUnavailable, TesseractEngine, extract_path
from ..extract.ocr import OcrPage
from ..heap import trim
from ..records import IndexedDocument
from ..telemetry import span
from .embedding import BATCH_CHUNKS, index_document
from .events import PagesDone, Progress, Stage, StageTimes
from .options import IngestOptions
from .screen import screen_texts

__all__ = ["SharedOcrEngine", "prepare"]


def prepare(
    path: Path,
    options: IngestOptions,
    embedder: Embedder,
    *,
    doc_id: str | None = None,
    title: str | None = None,
    name: str | None = None,
    engine: OcrEngine | None = None,
    progress: Progress | None = None,
    times: StageTimes | None = None,
    batch_chunks: int | None = BATCH_CHUNKS,
) -> IndexedDocument:
    """Everything short of the store write for the file at ``path``.

    ``doc_id``: the sha256 its bytes had when they were planned or queued (a file that changed
    since fails as corrupt). ``title``: the document's name instead of the one extraction
    finds (a re-ingest keeps the name its owner gave it). ``name``: the file's name as its
    owner knows it where ``path`` is another (an upload is stored under its hash): the title
    of a document that names none. ``engine``: the OCR engine for
    scanned pages (one opened for this file when None). ``progress`` hears each stage's pages.
    ``batch_chunks``: a document of more chunks is embedded as the store writes it, that many
    chunks at a time (:func:`~truthbase.ingest.embedding.index_document`); None: whole now
    (what crosses a process boundary).
    Raises :class:`~truthbase.extract.ExtractionError` for a file that cannot be ingested."""
    times = times if times is not None else StageTimes()

    def report(stage: Stage, done: int, total: int) -> None:
        if progress is not None:
            progress(PagesDone(path=path, stage=stage, done=done, total=total))

    started = time.perf_counter()
    with span("extract", file=path.name):
        document = extract_path(
            path,
            ocr=options.ocr,
            engine=engine,
            on_ocr_page=lambda done, total: report("ocr", done, total),
            name=name,
        )
    times.extract = time.perf_counter() - started
    trim()  # extraction's per-page scratch is freed: its pages go back before the embedding
    if doc_id is not None and document.sha256 != doc_id:
        raise ExtractionError("corrupt", f"{path.name} changed on disk since ingest began")
    # The server opens the file by its stored path, from whatever folder it runs in.
    document.path = str(path.resolve())
    if title is not None:
        document.title = title
    pages = len(document.units)
    report("screen", 0, pages)
    with span("screen"):
        screen = screen_texts([unit.text for unit in document.units])
    indexed = index_document(
        document,
        embedder,
        options,
        screen=screen,
        times=times,
        on_pages=lambda done, total: report("embed", done, total),
        batch_chunks=batch_chunks,
    )
    report("store", pages, pages)
    return indexed


class SharedOcrEngine:
    """One OCR engine for a whole ingest run, opened when the first page needs it (loading the
    language models takes a while) and closed by :meth:`close`; an engine that cannot be opened
    raises :class:`OcrUnavailable` on every use, so that each scan's no_text names the reason."""

    def __init__(self, settings: OcrSettings) -> None:
        self._settings = settings
        self._engine: TesseractEngine | None = None
        self._problem: OcrUnavailable | None = None

    def _open(self) -> TesseractEngine:
        if self._problem is not None:
            raise self._problem
        if self._engine is None:
            try:
                self._engine = TesseractEngine(self._settings.languages, self._settings.tessdata)
            except OcrUnavailable as exc:
                self._problem = exc
                raise
        return self._engine

    @property
    def name(self) -> str:
        return self._open().name

    @property
    def languages(self) -> str:
        return self._settings.languages

    def orientation(self, image: Any) -> int:
        return self._open().orientation(image)

    def read(self, image: Any) -> OcrPage:
        return self._open().read(image)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
