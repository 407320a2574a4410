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
from typing import Literal

import numpy as np
import numpy.typing as npt

from .chunking import chunk_units
from .config import ChunkingSettings
from .embed import Embedder, TokenEmbedder
from .extract import ExtractionError, extract_path
from .model import ChunkDraft, ExtractedDocument
from .records import IndexedDocument, IndexEmbedder, WindowDraft
from .retrieve.late import pack_signs
from .retrieve.windows import chunk_windows, context_text
from .store import Store, StoreError

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


def _embed_distinct(embedder: Embedder, inputs: list[str]) -> npt.NDArray[np.float32]:
    """Vectors of ``inputs``, each distinct text embedded once (overlapping chunks repeat
    windows)."""
    if not inputs:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    distinct = list(dict.fromkeys(inputs))
    embedded = embedder.embed(distinct)
    row = {text: i for i, text in enumerate(distinct)}
    return np.asarray(embedded[[row[text] for text in inputs]], dtype=np.float32)


def _with_context(context: str, text: str) -> str:
    return f"{context}\n{text}" if context else text


def index_document(
    document: ExtractedDocument,
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    times: StageTimes | None = None,
) -> list[ChunkDraft]:
    """Chunk, embed (chunks and their sentence windows) and store one extracted document."""
    times = times if times is not None else StageTimes()
    started = time.perf_counter()
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

    started = time.perf_counter()
    title = document.title if chunking.title_context else ""
    # A table chunk's column names (its context) are embedded with it, before its rows.
    chunk_inputs = [context_text(title, _with_context(d.context, d.text)) for d in drafts]
    window_inputs = [
        context_text(
            title,
            _with_context(drafts[w.chunk].context, texts[drafts[w.chunk].unit][w.start : w.end]),
        )
        for w in windows
    ]
    token_signs: list[bytes] | None = None
    if chunking.token_signs and drafts and isinstance(embedder, TokenEmbedder):
        # The chunk vectors and their token vectors come from one forward pass.
        chunk_vectors, tokens = embedder.embed_with_tokens(chunk_inputs)
        if tokens is not None and all(len(t.tokens) for t in tokens):
            token_signs = [pack_signs(t.vectors) for t in tokens]
        vectors = np.concatenate([chunk_vectors, _embed_distinct(embedder, window_inputs)])
    else:
        vectors = _embed_distinct(embedder, chunk_inputs + window_inputs)
    times.embed = time.perf_counter() - started

    started = time.perf_counter()
    store.add_document(
        IndexedDocument(
            document=document,
            chunks=drafts,
            vectors=vectors[: len(drafts)],
            embedder=IndexEmbedder(model_id=embedder.model_id, dim=embedder.dim),
            windows=windows,
            window_vectors=vectors[len(drafts) :],
            token_signs=token_signs,
        )
    )
    times.store = time.perf_counter() - started
    return drafts


def ingest_file(
    path: Path, store: Store, embedder: Embedder, chunking: ChunkingSettings
) -> FileOutcome:
    """Extract, chunk, embed and store one file; never raises for a bad file."""
    times = StageTimes()
    try:
        doc_id = sha256_file(path)
    except OSError as exc:
        return FileOutcome(path=path, status="failed", reason="unreadable", message=str(exc))
    if store.has_document(doc_id):
        return FileOutcome(path=path, status="unchanged", doc_id=doc_id)
    try:
        started = time.perf_counter()
        document = extract_path(path)
        # The server opens the file by its stored path, from whatever folder it runs in.
        document.path = str(path.resolve())
        times.extract = time.perf_counter() - started

        drafts = index_document(document, store, embedder, chunking, times)
    except ExtractionError as exc:
        return FileOutcome(
            path=path, status="failed", doc_id=doc_id, reason=exc.reason, message=str(exc)
        )
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
        times=times,
    )


def ingest_paths(
    paths: Sequence[Path],
    store: Store,
    embedder: Embedder,
    chunking: ChunkingSettings,
    *,
    on_start: Callable[[list[Path]], None] | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> IngestSummary:
    """Ingest every supported file under ``paths``; one transaction per document."""
    files, missing = discover(paths)
    summary = IngestSummary(outcomes=list(missing))
    if on_start is not None:
        on_start(files)
    for file in files:
        outcome = ingest_file(file, store, embedder, chunking)
        summary.outcomes.append(outcome)
        if on_file is not None:
            on_file(outcome)
    return summary
