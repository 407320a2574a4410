"""Ingestion: files and folders in, one transaction per document out.

A failing file is reported with its specific reason and skipped; the others ingest. Re-ingesting
the same bytes (by sha256) is a no-op, so a run started again after an interruption goes on with
the documents not stored yet: the one it was working on left nothing (its write is one
transaction, and nothing is written before it is whole).
"""

from __future__ import annotations

import dataclasses
import pickle
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from ..embed import Embedder
from ..extract import ExtractionError, OcrEngine
from ..heap import trim
from ..records import ChunkBatch, IndexedDocument
from ..store import Documents, StoreError, StoreFull
from ..telemetry import span
from .embedding import BATCH_CHUNKS
from .events import (
    DocumentDone,
    FileOutcome,
    IngestSummary,
    OnEvent,
    Progress,
    StageTimes,
)
from .files import Planned, discover, plan, planned_run
from .options import IngestOptions
from .preparation import SharedOcrEngine, prepare

__all__ = ["ingest_file", "ingest_paths", "prepare_file", "store_prepared", "write_document"]


def prepare_file(
    planned: Planned,
    options: IngestOptions,
    embedder: Embedder,
    *,
    engine: OcrEngine | None = None,
    progress: Progress | None = None,
    batch_chunks: int | None = BATCH_CHUNKS,
) -> tuple[FileOutcome, IndexedDocument | None]:
    """:func:`prepare` that never raises for a bad file: its outcome (``ingested`` until the
    store says otherwise, or ``failed`` with the reason) and the document to write (a long one
    embedded as the store writes it, ``batch_chunks`` chunks at a time; None: whole now)."""
    path, times = planned.path, StageTimes()
    try:
        indexed = prepare(
            path,
            options,
            embedder,
            doc_id=planned.doc_id,
            engine=engine,
            progress=progress,
            times=times,
            batch_chunks=batch_chunks,
        )
    except ExtractionError as exc:
        return _failed(planned, exc.reason, str(exc)), None
    except Exception as exc:  # one bad file must not stop the batch
        return _failed(planned, "error", f"unexpected {type(exc).__name__}: {exc}"), None
    report = indexed.document.report
    outcome = FileOutcome(
        path=path,
        status="ingested",
        doc_id=planned.doc_id,
        pages=len(indexed.document.units),
        chunks=len(indexed.chunks),
        ligature_words_repaired=report.ligature_words_repaired,
        ocr_pages=len(report.ocr_pages),
        warnings=list(report.warnings),
        times=times,
    )
    return outcome, indexed


def _failed(planned: Planned, reason: str, message: str) -> FileOutcome:
    return FileOutcome(
        path=planned.path, status="failed", doc_id=planned.doc_id, reason=reason, message=message
    )


def write_document(store: Documents, indexed: IndexedDocument, *, replace: bool = False) -> None:
    """The store write of one prepared document: one transaction (``replace``: the document is
    in the index already, a re-ingest, and its rows are replaced in the same one).

    A long document's batches (:attr:`IndexedDocument.batches`) are embedded first, each
    spooled to a temporary file as it is done, and read back one at a time by the write: the
    memory holds one batch, and the store's write lock is held for the write only, not while
    the document is embedded (SQLite's other writers give up after 30 s)."""
    with ExitStack() as stack:
        if indexed.batches is not None:
            spool = stack.enter_context(tempfile.TemporaryFile(prefix="truthbase-batches-"))
            indexed = dataclasses.replace(indexed, batches=_spooled(indexed.batches, spool))
        with span("store", replace=replace):
            if replace:
                store.add_document(indexed, replace=True)
            else:
                store.add_document(indexed)


def _spooled(batches: Iterable[ChunkBatch], spool: IO[bytes]) -> Iterator[ChunkBatch]:
    """``batches`` made and written to ``spool`` now, then read back one at a time."""
    count = 0
    with span("embed_batches"):
        for batch in batches:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
            count += 1
    spool.seek(0)
    return (pickle.load(spool) for _ in range(count))  # our own file, just written


def store_prepared(
    store: Documents, outcome: FileOutcome, indexed: IndexedDocument | None
) -> FileOutcome:
    """Write a prepared document and complete its outcome (a store error fails the file; a
    full store raises :class:`StoreFull`: every file after it would fail the same way)."""
    if indexed is None:
        return outcome
    started, embedding = time.perf_counter(), outcome.times.embed
    written = [0]
    if indexed.batches is not None:  # a long document: embedded as it is written
        indexed = dataclasses.replace(indexed, batches=_counted(indexed.batches, written))
    try:
        write_document(store, indexed)
        if indexed.batches is not None:
            outcome.chunks = written[0]
    except StoreFull:
        raise
    except StoreError as exc:
        outcome.status, outcome.reason, outcome.message = "failed", "store", str(exc)
    except Exception as exc:  # one bad file must not stop the batch
        outcome.status, outcome.reason = "failed", "error"
        outcome.message = f"unexpected {type(exc).__name__}: {exc}"
    # The batches' embedding is timed as embedding (it ran inside the store's write).
    outcome.times.store = time.perf_counter() - started - (outcome.times.embed - embedding)
    return outcome


def _counted(batches: Iterable[ChunkBatch], written: list[int]) -> Iterator[ChunkBatch]:
    for batch in batches:
        yield batch
        written[0] += len(batch.chunks)


def ingest_file(
    path: Path,
    store: Documents,
    embedder: Embedder,
    options: IngestOptions | None = None,
    *,
    engine: OcrEngine | None = None,
    progress: Progress | None = None,
) -> FileOutcome:
    """Prepare and store one file; never raises for a bad file. A file whose bytes the index
    holds already is left as it is (its owner and visibility too)."""
    (entry,) = plan([path], store)
    if isinstance(entry, FileOutcome):
        return entry
    return _ingest_planned(entry, store, embedder, options or IngestOptions(), engine, progress)


def _ingest_planned(
    planned: Planned,
    store: Documents,
    embedder: Embedder,
    options: IngestOptions,
    engine: OcrEngine | None,
    progress: Progress | None,
) -> FileOutcome:
    options = options.for_index(store.index_embedder())  # the index's token code
    with span("ingest", file=planned.path.name):
        outcome, indexed = prepare_file(
            planned, options, embedder, engine=engine, progress=progress
        )
        outcome = store_prepared(store, outcome, indexed)
    del indexed
    trim()  # the document is freed: its pages go back to the system, not to the next one's peak
    return outcome


def ingest_paths(
    paths: Sequence[Path],
    store: Documents,
    embedder: Embedder,
    options: IngestOptions | None = None,
    *,
    on_event: OnEvent | None = None,
) -> IngestSummary:
    """Ingest every supported file under ``paths``, one transaction per document, in this
    process; ``on_event`` hears the run's plan, each page stage and each file's outcome.

    Scanned pages are OCR'd under ``options.ocr`` by one engine shared by all the files."""
    options = options or IngestOptions()
    files, missing = discover(paths)
    entries = plan(files, store)
    summary = IngestSummary()
    emit: OnEvent = on_event or (lambda event: None)
    emit(planned_run(files, entries))

    def report(outcome: FileOutcome) -> None:
        summary.outcomes.append(outcome)
        emit(DocumentDone(outcome=outcome))

    for outcome in missing:
        report(outcome)
    engine = SharedOcrEngine(options.ocr)
    try:
        for entry in entries:
            if isinstance(entry, FileOutcome):
                report(entry)
                continue
            report(_ingest_planned(entry, store, embedder, options, engine, emit))
    finally:
        engine.close()
    return summary
