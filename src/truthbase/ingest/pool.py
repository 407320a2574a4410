"""Parallel ingest: :func:`truthbase.ingest.prepare` in worker processes, the store's writes in
the parent, one transaction per document as in :func:`truthbase.ingest.ingest_paths`.

The parent plans the files (:func:`truthbase.ingest.files.plan`: bytes the index holds, or a
file that repeats another of the same run, are "unchanged" without a worker seeing them); each
worker runs :func:`truthbase.ingest.prepare_file` (the same code, the same error handling) and
sends back the finished :class:`IndexedDocument`; the parent writes each one in file order, so
the index ends up as a sequential ingest leaves it.

Workers are spawned (not forked: the parent may hold an onnxruntime session and pdfium state)
and each loads its own embedder and, when a scan needs it, its own OCR engine. At most two
files a worker are in flight, so the results waiting for the parent stay bounded. A worker that
dies (a crash inside pdfium) fails its file and the ones after it with reason "error".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ..blas import limit_blas_threads
from ..embed import Embedder, load_embedder
from ..heap import fix_mmap_threshold
from ..records import IndexedDocument
from ..store import Documents
from .events import DocumentDone, FileOutcome, IngestSummary, OnEvent
from .files import Planned, discover, plan, planned_run
from .options import IngestOptions
from .pipeline import prepare_file, store_prepared
from .preparation import SharedOcrEngine

__all__ = ["DEFAULT_WORKERS", "ingest_paths_parallel"]

#: ``ingest --workers``'s default. Measured on the 2-core machine while ~8 other sessions shared
#: it (benchmarks/ingest_workers_bench.py, seed corpus, load average 12-36): 1 worker 418 s, 2
#: workers 444 s, 4 workers 362 s. Embedding dominates ingest and the embedder's onnxruntime
#: threads already use both cores, so 2 workers only compete for them; 4 won 15% by taking a
#: bigger share of a machine other sessions loaded, which an idle 2-core machine does not give,
#: at four copies of the model's memory. Hence 1; re-measure on an idle machine.
DEFAULT_WORKERS = 1

# One per worker process, set by _start.
_options: IngestOptions | None = None
_embedder: Embedder | None = None
_engine: SharedOcrEngine | None = None


def _start(options: IngestOptions) -> None:
    global _options, _embedder, _engine
    _options = options
    limit_blas_threads()  # a spawned process is an edge (see truthbase.blas)
    fix_mmap_threshold()  # before the embedder loads (see truthbase.heap)
    _embedder = load_embedder(options.embedder)
    _engine = SharedOcrEngine(options.ocr)


def _prepare(planned: Planned) -> tuple[FileOutcome, IndexedDocument | None]:
    assert _options is not None and _embedder is not None and _engine is not None
    # Whole: what crosses the process boundary is the embedded document.
    return prepare_file(planned, _options, _embedder, engine=_engine, batch_chunks=None)


def ingest_paths_parallel(
    paths: Sequence[Path],
    store: Documents,
    options: IngestOptions,
    *,
    workers: int,
    on_event: OnEvent | None = None,
) -> IngestSummary:
    """:func:`truthbase.ingest.ingest_paths` with ``workers`` processes (each loading the
    embedder ``options.embedder`` names); outcomes in file order after the files that needed
    no worker (missing, unreadable, unchanged). Pages are heard of per document."""
    files, missing = discover(paths)
    entries = plan(files, store)
    summary = IngestSummary()
    emit: OnEvent = on_event or (lambda event: None)
    emit(planned_run(files, entries))

    def report(outcome: FileOutcome) -> None:
        summary.outcomes.append(outcome)
        emit(DocumentDone(outcome=outcome))

    todo: list[Planned] = []
    for entry in [*missing, *entries]:
        if isinstance(entry, Planned):
            todo.append(entry)
        else:
            report(entry)
    if not todo:
        return summary
    options = options.for_index(store.index_embedder())  # the index's token code
    with ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(todo))),
        mp_context=get_context("spawn"),
        initializer=_start,
        initargs=(options,),
    ) as pool:
        pending: deque[tuple[Planned, Future[Any]]] = deque()
        queue = deque(todo)
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                planned = queue.popleft()
                pending.append((planned, pool.submit(_prepare, planned)))
            planned, future = pending.popleft()
            try:
                outcome, indexed = future.result()
            except BrokenProcessPool as exc:
                message = f"the ingest worker died ({exc})"
                report(
                    FileOutcome(path=planned.path, status="failed", reason="error", message=message)
                )
                continue
            report(store_prepared(store, outcome, indexed))
    return summary
