"""Ingestion: files and folders in, one transaction per document out.

A failing file is reported with its specific reason and skipped; the others ingest. Re-ingesting
the same bytes (by sha256) is a no-op.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .chunking import chunk_units
from .config import ChunkingSettings, OcrSettings
from .embed import Embedder, TokenEmbedder
from .extract import (
    ExtractionError,
    OcrEngine,
    OcrProgress,
    OcrUnavailable,
    TesseractEngine,
    extract_path,
)
from .extract.ocr import OcrPage
from .heap import trim
from .model import ChunkDraft, ExtractedDocument, Visibility
from .records import IndexedDocument, IndexEmbedder, ScreenResult, WindowDraft
from .retrieve.late import pack_signs
from .retrieve.windows import chunk_windows, context_text, with_context
from .store import Store, StoreError, StoreFull
from .telemetry import span, start_span
from .text.language import assign_languages

SUPPORTED_SUFFIXES = (".pdf", ".epub")

Status = Literal["ingested", "unchanged", "failed"]


@dataclass(slots=True, kw_only=True)
class StageTimes:
    """Seconds spent per stage, for the summary and the benchmark."""

    extract: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    store: float = 0.0


@dataclass(slots=True, kw_only=True)
class FileOutcome:
    """What happened to one file."""

    path: Path
    status: Status
    doc_id: str | None = None
    reason: str | None = None  # encrypted, not_pdf, corrupt, no_text, unsupported, missing, ...
    message: str | None = None
    pages: int = 0
    chunks: int = 0
    ligature_words_repaired: int = 0
    ocr_pages: int = 0  # pages whose text was read by OCR
    warnings: list[str] = field(default_factory=list)  # the extraction report's
    times: StageTimes = field(default_factory=StageTimes)


@dataclass(slots=True)
class IngestSummary:
    outcomes: list[FileOutcome] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[FileOutcome]]:
    """Expand folders recursively into supported files; report paths that do not exist."""
    files: list[Path] = []
    missing: list[FileOutcome] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
            )
        elif path.is_file():
            found = [path]
        else:
            missing.append(
                FileOutcome(
                    path=path, status="failed", reason="missing", message="no such file or folder"
                )
            )
            continue
        for file in found:
            resolved = file.resolve()
            if resolved not in seen:
                seen.add(resolved)
                files.append(file)
    return files, missing


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: Texts given to the embedder at once by :func:`_embed_distinct`: a call holds the tokenizer's
#: encodings of all its texts until it returns (34 MB for Pride and Prejudice's 4,988 windows in
#: one call), and the bundled embedder's vectors do not depend on what a text is batched with.
EMBED_GROUP = 256


def _embed_distinct(embedder: Embedder, inputs: list[str]) -> npt.NDArray[np.float32]:
    """Vectors of ``inputs``, each distinct text embedded once (overlapping chunks repeat
    windows), in calls of :data:`EMBED_GROUP` texts at most."""
    if not inputs:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    distinct = list(dict.fromkeys(inputs))
    # Longest first, so that the embedder's own length batches stay as full as in one call.
    order = sorted(range(len(distinct)), key=lambda i: len(distinct[i]), reverse=True)
    embedded = np.empty((len(distinct), embedder.dim), dtype=np.float32)
    for lo in range(0, len(order), EMBED_GROUP):
        rows = order[lo : lo + EMBED_GROUP]
        embedded[rows] = embedder.embed([distinct[i] for i in rows])
    row = {text: i for i, text in enumerate(distinct)}
    return embedded[[row[text] for text in inputs]]


#: Chunks embedded between two progress reports (a job's "embed" stage, pages done).
PROGRESS_BATCH = 64

#: Chunks whose token vectors are held at once while embedding without progress reports (their
#: float32 token vectors, 1.5 KB a token: 128 chunks held 38 MB of the seed ingest's peak).
TOKEN_GROUP = 32

#: ``(stage, pages_done, pages_total)``: how far :func:`index_document` is.
Progress = Callable[[str, int, int], None]


def _embed_chunks(
    embedder: Embedder,
    inputs: list[str],
    units: Sequence[int],
    n_units: int,
    progress: Progress | None,
) -> tuple[npt.NDArray[np.float32], list[bytes] | None]:
    """The chunks' vectors and packed token signs (None: no token data); with ``progress``,
    embedded in batches of :data:`PROGRESS_BATCH`, each reported as the pages it finished.

    Without ``progress`` the chunks go longest first in groups of :data:`TOKEN_GROUP`: a group's
    float32 token vectors (1.5 KB a token) are packed to signs before the next group is
    embedded, so a long book never holds them all (Pride and Prejudice's were 300 MB), and the
    embedder still batches texts of equal length together."""
    if progress is None and len(inputs) > TOKEN_GROUP:
        order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]), reverse=True)
        out = np.zeros((len(inputs), embedder.dim), dtype=np.float32)
        packed: list[bytes] | None = [b""] * len(inputs)
        for lo in range(0, len(order), TOKEN_GROUP):
            rows = order[lo : lo + TOKEN_GROUP]
            group_vectors, group_signs = _embed_chunks(
                embedder, [inputs[i] for i in rows], units, n_units, None
            )
            out[rows] = group_vectors
            if packed is not None and group_signs is not None:
                for row, sign in zip(rows, group_signs, strict=True):
                    packed[row] = sign
            else:
                packed = None
        return out, packed
    batches = (
        [(0, len(inputs))]
        if progress is None
        else [
            (i, min(i + PROGRESS_BATCH, len(inputs))) for i in range(0, len(inputs), PROGRESS_BATCH)
        ]
    )
    vectors: list[npt.NDArray[np.float32]] = []
    signs: list[bytes] | None = []
    token_embedder = isinstance(embedder, TokenEmbedder)
    for lo, hi in batches:
        if token_embedder:
            assert isinstance(embedder, TokenEmbedder)
            batch_vectors, tokens = embedder.embed_with_tokens(inputs[lo:hi])
            if signs is not None and tokens is not None and all(len(t.tokens) for t in tokens):
                signs += [pack_signs(t.vectors) for t in tokens]
            else:
                signs = None
        else:
            batch_vectors, signs = _embed_distinct(embedder, inputs[lo:hi]), None
        vectors.append(np.asarray(batch_vectors, dtype=np.float32))
        if progress is not None:
            done = n_units if hi == len(inputs) else units[hi - 1]
            progress("embed", done, n_units)
    if not vectors:
        return np.zeros((0, embedder.dim), dtype=np.float32), None
    return np.concatenate(vectors), signs


def index_document(
    document: ExtractedDocument,
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    times: StageTimes | None = None,
    *,
    replace: bool = False,
    progress: Progress | None = None,
    owner: str | None = None,
    visibility: Visibility = "shared",
    screen: ScreenResult | None = None,
) -> list[ChunkDraft]:
    """Detect its languages, chunk, embed (chunks and their sentence windows) and store one
    extracted document, owned by ``owner`` (None: the operator) with ``visibility`` (see
    :mod:`truthbase.access`).

    ``replace``: the document is in the index already (a re-ingest) and is replaced in the same
    transaction. ``progress`` hears each stage (and, while embedding, the pages done).
    ``screen``: the prompt-injection screen's verdict, stored with the document."""
    times = times if times is not None else StageTimes()
    started = time.perf_counter()
    chunk_span = start_span("chunk", units=len(document.units))
    assign_languages(document)  # the full-text terms are stemmed in each unit's language
    drafts = chunk_units(document.units, max_chars=chunking.max_chars, overlap=chunking.overlap)
    texts = {unit.index: unit.text for unit in document.units}
    windows = [
        WindowDraft(chunk=w.chunk, start=w.start, end=w.end)
        for w in chunk_windows(
            [(d.start, d.end) for d in drafts],
            [texts[d.unit] for d in drafts],
            window_chars=chunking.window_chars,
            overlap=chunking.window_overlap,
        )
    ]
    times.chunk = time.perf_counter() - started
    chunk_span.set_attribute("truthbase.chunks", len(drafts))
    chunk_span.end()

    started = time.perf_counter()
    embed_span = start_span("embed", chunks=len(drafts), windows=len(windows))
    title = document.title if chunking.title_context else ""
    # A table chunk's column names (its context) are embedded with it, before its rows.
    chunk_inputs = [context_text(title, with_context(d.context, d.text)) for d in drafts]
    window_inputs = [
        context_text(
            title,
            with_context(drafts[w.chunk].context, texts[drafts[w.chunk].unit][w.start : w.end]),
        )
        for w in windows
    ]
    token_signs: list[bytes] | None = None
    if progress is not None:
        progress("embed", 0, len(document.units))
    if progress is not None or (
        chunking.token_signs and drafts and isinstance(embedder, TokenEmbedder)
    ):
        # The chunk vectors and their token vectors come from one forward pass.
        chunk_vectors, token_signs = _embed_chunks(
            embedder, chunk_inputs, [d.unit for d in drafts], len(document.units), progress
        )
        if not chunking.token_signs:
            token_signs = None
        vectors = np.concatenate([chunk_vectors, _embed_distinct(embedder, window_inputs)])
    else:
        vectors = _embed_distinct(embedder, chunk_inputs + window_inputs)
    times.embed = time.perf_counter() - started
    embed_span.end()

    started = time.perf_counter()
    if progress is not None:
        progress("store", len(document.units), len(document.units))
    indexed = IndexedDocument(
        document=document,
        chunks=drafts,
        vectors=vectors[: len(drafts)],
        embedder=IndexEmbedder(model_id=embedder.model_id, dim=embedder.dim),
        windows=windows,
        window_vectors=vectors[len(drafts) :],
        token_signs=token_signs,
        owner=owner,
        visibility=visibility,
        screen=screen,
    )
    with span("store", replace=replace):
        if replace:
            store.add_document(indexed, replace=True)
        else:
            store.add_document(indexed)
    times.store = time.perf_counter() - started
    return drafts


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


def ingest_file(
    path: Path,
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    *,
    owner: str | None = None,
    visibility: Visibility = "shared",
    ocr: OcrSettings | None = None,
    engine: OcrEngine | None = None,
    on_ocr_page: OcrProgress | None = None,
) -> FileOutcome:
    """Extract, chunk, embed and store one file; never raises for a bad file. A file whose
    bytes the index holds already is left as it is (its owner and visibility too).

    PDF pages without a usable text layer are OCR'd under ``ocr`` (the default settings when
    None) with ``engine`` (one opened for this file when None)."""
    times = StageTimes()
    try:
        doc_id = sha256_file(path)
    except OSError as exc:
        return FileOutcome(path=path, status="failed", reason="unreadable", message=str(exc))
    if store.has_document(doc_id):
        return FileOutcome(path=path, status="unchanged", doc_id=doc_id)
    with span("ingest", file=path.name):
        outcome = _ingest_new(
            path,
            doc_id,
            store,
            embedder,
            chunking,
            times,
            owner,
            visibility,
            ocr,
            engine,
            on_ocr_page,
        )
    trim()  # the document is freed: its pages go back to the system, not to the next one's peak
    return outcome


def _ingest_new(
    path: Path,
    doc_id: str,
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    times: StageTimes,
    owner: str | None,
    visibility: Visibility,
    ocr: OcrSettings | None,
    engine: OcrEngine | None,
    on_ocr_page: OcrProgress | None,
) -> FileOutcome:
    try:
        started = time.perf_counter()
        with span("extract", file=path.name):
            document = extract_path(path, ocr=ocr, engine=engine, on_ocr_page=on_ocr_page)
        # The server opens the file by its stored path, from whatever folder it runs in.
        document.path = str(path.resolve())
        times.extract = time.perf_counter() - started

        drafts = index_document(
            document, store, embedder, chunking, times, owner=owner, visibility=visibility
        )
    except ExtractionError as exc:
        return FileOutcome(
            path=path, status="failed", doc_id=doc_id, reason=exc.reason, message=str(exc)
        )
    except StoreFull:
        raise  # every file after this one would fail the same way: the batch stops here
    except StoreError as exc:
        return FileOutcome(
            path=path, status="failed", doc_id=doc_id, reason="store", message=str(exc)
        )
    except Exception as exc:  # one bad file must not stop the batch
        return FileOutcome(
            path=path,
            status="failed",
            doc_id=doc_id,
            reason="error",
            message=f"unexpected {type(exc).__name__}: {exc}",
        )
    return FileOutcome(
        path=path,
        status="ingested",
        doc_id=doc_id,
        pages=len(document.units),
        chunks=len(drafts),
        ligature_words_repaired=document.report.ligature_words_repaired,
        ocr_pages=len(document.report.ocr_pages),
        warnings=list(document.report.warnings),
        times=times,
    )


def ingest_paths(
    paths: Sequence[Path],
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    *,
    ocr: OcrSettings | None = None,
    on_start: Callable[[list[Path]], None] | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    owner: str | None = None,
    visibility: Visibility = "shared",
    on_ocr_page: Callable[[Path, int, int], None] | None = None,
) -> IngestSummary:
    """Ingest every supported file under ``paths``; one transaction per document; new
    documents get ``owner`` and ``visibility``.

    Scanned pages are OCR'd under ``ocr`` (default settings when None) by one engine shared by
    all the files; ``on_ocr_page(file, done, total)`` follows each OCR'd page."""
    files, missing = discover(paths)
    summary = IngestSummary(outcomes=list(missing))
    settings = ocr if ocr is not None else OcrSettings()
    engine = SharedOcrEngine(settings)
    if on_start is not None:
        on_start(files)
    try:
        for file in files:
            progress: OcrProgress | None = None
            if on_ocr_page is not None:
                progress = _file_progress(on_ocr_page, file)
            outcome = ingest_file(
                file,
                store,
                embedder,
                chunking,
                owner=owner,
                visibility=visibility,
                ocr=settings,
                engine=engine,
                on_ocr_page=progress,
            )
            summary.outcomes.append(outcome)
            if on_file is not None:
                on_file(outcome)
    finally:
        engine.close()
    return summary


def _file_progress(report: Callable[[Path, int, int], None], file: Path) -> OcrProgress:
    def on_page(done: int, total: int) -> None:
        report(file, done, total)

    return on_page
