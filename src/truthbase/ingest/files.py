"""Which files a run ingests: folders expanded, each file hashed once, the ones whose bytes the
index holds (or that repeat an earlier file of the run) set aside as unchanged. Every way
through ingest (a folder, the process pool) plans its files here, so that a run started again
after an interruption goes on with the documents not stored yet."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..extract import ExtractionError
from ..extract.sniff import probe
from .events import FileOutcome, RunStarted

__all__ = ["SUPPORTED_SUFFIXES", "Planned", "discover", "plan", "planned_run", "sha256_file"]

SUPPORTED_SUFFIXES = (".pdf", ".epub")


class HasDocument(Protocol):
    def has_document(self, doc_id: str) -> bool: ...


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


@dataclass(frozen=True, slots=True)
class Planned:
    """A file to ingest: its document id (the sha256 of its bytes) and its page count (0
    when it cannot be opened: ingesting it will say why)."""

    path: Path
    doc_id: str
    pages: int


def page_count(path: Path) -> int:
    try:
        return probe(path, "epub" if path.suffix.lower() == ".epub" else "pdf")
    except (ExtractionError, OSError):
        return 0


def plan(files: Sequence[Path], store: HasDocument) -> list[Planned | FileOutcome]:
    """Per file, in order: what to ingest, or its outcome already (unreadable: failed; its
    bytes in the index, or those of an earlier file of ``files``: unchanged)."""
    entries: list[Planned | FileOutcome] = []
    seen: set[str] = set()
    for file in files:
        try:
            doc_id = sha256_file(file)
        except OSError as exc:
            entries.append(
                FileOutcome(path=file, status="failed", reason="unreadable", message=str(exc))
            )
            continue
        if doc_id in seen or store.has_document(doc_id):
            entries.append(FileOutcome(path=file, status="unchanged", doc_id=doc_id))
            continue
        seen.add(doc_id)
        entries.append(Planned(file, doc_id, page_count(file)))
    return entries


def planned_run(files: Sequence[Path], entries: Sequence[Planned | FileOutcome]) -> RunStarted:
    """The event that opens a run: what :func:`plan` found."""
    todo = [e for e in entries if isinstance(e, Planned)]
    return RunStarted(files=tuple(files), todo=len(todo), pages_total=sum(e.pages for e in todo))
