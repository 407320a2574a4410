"""Parallel ingest: extraction, chunking and embedding in worker processes, the store's writes
in the parent, one transaction per document as in :func:`truthbase.ingest.ingest_paths`.

Each worker runs :func:`truthbase.ingest.ingest_file` (the same code, the same error handling)
against a store that only captures the finished :class:`IndexedDocument` instead of writing it;
the parent writes each one with ``add_document`` in file order, so the index ends up as a
sequential ingest leaves it. Files are hashed in the parent first: bytes the index holds, or a
file that repeats another of the same run, are "unchanged" without a worker seeing them.

Workers are spawned (not forked: the parent may hold an onnxruntime session and pdfium state)
and each loads its own embedder and, when a scan needs it, its own OCR engine. At most two
files a worker are in flight, so the results waiting for the parent stay bounded. A worker that
dies (a crash inside pdfium) fails its file and the ones after it with reason "error".
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, cast

from .blas import limit_blas_threads
from .config import ChunkingSettings, EmbedderSettings, OcrSettings
from .embed import Embedder, load_embedder
from .heap import fix_mmap_threshold
from .ingest import FileOutcome, IngestSummary, SharedOcrEngine, discover, ingest_file, sha256_file
from .model import Visibility
from .records import IndexedDocument
from .store import Store, StoreError

#: ``ingest --workers``'s default. Measured on the 2-core machine while ~8 other sessions shared
#: it (benchmarks/ingest_workers_bench.py, seed corpus, load average 12-36): 1 worker 418 s, 2
#: workers 444 s, 4 workers 362 s. Embedding dominates ingest and the embedder's onnxruntime
#: threads already use both cores, so 2 workers only compete for them; 4 won 15% by taking a
#: bigger share of a machine other sessions loaded, which an idle 2-core machine does not give,
#: at four copies of the model's memory. Hence 1; re-measure on an idle machine.
DEFAULT_WORKERS = 1


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    embedder: EmbedderSettings
    chunking: ChunkingSettings
    ocr: OcrSettings
    owner: str | None
    visibility: Visibility


class _CaptureStore:
    """What :func:`ingest_file` needs of a store, keeping the document instead of writing it."""

    def __init__(self) -> None:
        self.indexed: IndexedDocument | None = None

    def has_document(self, doc_id: str) -> bool:
        return False  # the parent asked its store before sending the file

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        self.indexed = indexed


# One per worker process, set by _start.
_config: WorkerConfig | None = None
_embedder: Embedder | None = None
_engine: SharedOcrEngine | None = None


def _start(config: WorkerConfig) -> None:
    global _config, _embedder, _engine
    _config = config
    limit_blas_threads()  # a spawned process is an edge (see truthbase.blas)
    fix_mmap_threshold()  # before the embedder loads (see truthbase.heap)
    _embedder = load_embedder(config.embedder)
    _engine = SharedOcrEngine(config.ocr)


def _prepare(path: str) -> tuple[FileOutcome, IndexedDocument | None]:
    assert _config is not None and _embedder is not None and _engine is not None
    capture = _CaptureStore()
    outcome = ingest_file(
        Path(path),
        cast(Store, capture),  # only has_document and add_document are called
        _embedder,
        _config.chunking,
        owner=_config.owner,
        visibility=_config.visibility,
        ocr=_config.ocr,
        engine=_engine,
    )
    return outcome, capture.indexed if outcome.status == "ingested" else None


def _store(store: Store, outcome: FileOutcome, indexed: IndexedDocument | None) -> FileOutcome:
    if indexed is None:
        return outcome
    started = time.perf_counter()
    try:
        store.add_document(indexed)
    except StoreError as exc:
        outcome.status, outcome.reason, outcome.message = "failed", "store", str(exc)
    outcome.times.store = time.perf_counter() - started
    return outcome


def ingest_paths_parallel(
    paths: Sequence[Path],
    store: Store,
    embedder: EmbedderSettings,
    chunking: ChunkingSettings,
    *,
    workers: int,
    ocr: OcrSettings | None = None,
    on_start: Callable[[list[Path]], None] | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    owner: str | None = None,
    visibility: Visibility = "shared",
) -> IngestSummary:
    """:func:`truthbase.ingest.ingest_paths` with ``workers`` processes (each loading the
    embedder ``embedder`` names); outcomes in file order after the files that needed no worker
    (missing, unreadable, unchanged)."""
    files, missing = discover(paths)
    summary = IngestSummary(outcomes=list(missing))
    if on_start is not None:
        on_start(files)

    def report(outcome: FileOutcome) -> None:
        summary.outcomes.append(outcome)
        if on_file is not None:
            on_file(outcome)

    todo: list[Path] = []
    seen: set[str] = set()
    for file in files:
        try:
            doc_id = sha256_file(file)
        except OSError as exc:
            report(FileOutcome(path=file, status="failed", reason="unreadable", message=str(exc)))
            continue
        if doc_id in seen or store.has_document(doc_id):
            report(FileOutcome(path=file, status="unchanged", doc_id=doc_id))
            continue
        seen.add(doc_id)
        todo.append(file)
    if not todo:
        return summary

    config = WorkerConfig(
        embedder=embedder,
        chunking=chunking,
        ocr=ocr if ocr is not None else OcrSettings(),
        owner=owner,
        visibility=visibility,
    )
    with ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(todo))),
        mp_context=get_context("spawn"),
        initializer=_start,
        initargs=(config,),
    ) as pool:
        pending: deque[tuple[Path, Future[Any]]] = deque()
        queue = deque(todo)
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                file = queue.popleft()
                pending.append((file, pool.submit(_prepare, str(file))))
            file, future = pending.popleft()
            try:
                outcome, indexed = future.result()
            except BrokenProcessPool as exc:
                report(
                    FileOutcome(
                        path=file,
                        status="failed",
                        reason="error",
                        message=f"the ingest worker died ({exc})",
                    )
                )
                continue
            report(_store(store, outcome, indexed))
    return summary
