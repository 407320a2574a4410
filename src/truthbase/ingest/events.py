"""What an ingest reports, as typed records: the run's plan, pages done within a document, and
each document's outcome. The pipeline emits them through one callback (:data:`OnEvent`); the
CLI, the job worker and the summary only read them (none re-derives progress)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "DocumentDone",
    "FileOutcome",
    "IngestEvent",
    "IngestSummary",
    "OnEvent",
    "PagesDone",
    "Progress",
    "RunStarted",
    "Stage",
    "StageTimes",
    "Status",
]

Status = Literal["ingested", "unchanged", "failed"]

#: The stages of one document, in order ("ocr": its scanned pages, inside extraction).
Stage = Literal["extract", "ocr", "screen", "embed", "store"]


@dataclass(slots=True, kw_only=True)
class StageTimes:
    """Seconds spent per stage, for the summary and the benchmark."""

    extract: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    store: float = 0.0

    @property
    def total(self) -> float:
        return self.extract + self.chunk + self.embed + self.store


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


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    """Once, before the first document: ``files`` found, ``todo`` of them not in the index yet
    (the others are reported unchanged), ``pages_total`` the pages of those (an EPUB's count
    is its archive's XHTML files, an estimate until it is read)."""

    files: tuple[Path, ...]
    todo: int
    pages_total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PagesDone:
    """``done`` of ``total`` pages of ``path`` through ``stage`` (OCR: of its scanned pages)."""

    path: Path
    stage: Stage
    done: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentDone:
    """One file finished: ingested, unchanged (its bytes are in the index) or failed."""

    outcome: FileOutcome


IngestEvent = RunStarted | PagesDone | DocumentDone

#: Hears every event of a run.
OnEvent = Callable[[IngestEvent], None]

#: Hears one document's progress (:func:`truthbase.ingest.prepare`).
Progress = Callable[[PagesDone], None]
