"""Ingest: files in, documents in the index out, by one way (:func:`prepare`: extract under the
OCR settings, screen for prompt injection, chunk, embed; then one store transaction).

Modules: :mod:`.options` (the one options value), :mod:`.files` (discovery, hashing, the
run's plan), :mod:`.preparation` (:func:`prepare`), :mod:`.embedding` (chunks, windows,
vectors, token signs), :mod:`.pipeline` (a run in this process, the store write), :mod:`.pool`
(a run over worker processes), :mod:`.worker` (the job queue's worker), :mod:`.backfill`
(token signs for older indexes), :mod:`.screen` (the prompt-injection screen),
:mod:`.windows` (sentence windows) and :mod:`.events` (what a run reports).
"""

from __future__ import annotations

from .embedding import index_document, pack_signs
from .events import (
    DocumentDone,
    FileOutcome,
    IngestEvent,
    IngestSummary,
    OnEvent,
    PagesDone,
    Progress,
    RunStarted,
    Stage,
    StageTimes,
    Status,
)
from .files import SUPPORTED_SUFFIXES, discover, plan, sha256_file
from .options import IngestOptions
from .pipeline import ingest_file, ingest_paths, prepare_file, store_prepared, write_document
from .pool import DEFAULT_WORKERS, ingest_paths_parallel
from .preparation import SharedOcrEngine, prepare

__all__ = [
    "DEFAULT_WORKERS",
    "SUPPORTED_SUFFIXES",
    "DocumentDone",
    "FileOutcome",
    "IngestEvent",
    "IngestOptions",
    "IngestSummary",
    "OnEvent",
    "PagesDone",
    "Progress",
    "RunStarted",
    "SharedOcrEngine",
    "Stage",
    "StageTimes",
    "Status",
    "discover",
    "index_document",
    "ingest_file",
    "ingest_paths",
    "ingest_paths_parallel",
    "pack_signs",
    "plan",
    "prepare",
    "prepare_file",
    "sha256_file",
    "store_prepared",
    "write_document",
]
