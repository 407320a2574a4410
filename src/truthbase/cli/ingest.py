"""`ingest`: the pipeline's events (:mod:`truthbase.ingest.events`) rendered three ways: one
line per document when the output is not a terminal (a script, a service log, CI), JSON lines
with ``--json-progress``, and on a terminal a progress bar of pages with an ETA, then a table."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..errors import InvalidInput
from ..heap import fix_mmap_threshold
from ..ingest import (
    DEFAULT_WORKERS,
    DocumentDone,
    FileOutcome,
    IngestEvent,
    IngestOptions,
    IngestSummary,
    OnEvent,
    PagesDone,
    RunStarted,
    ingest_paths,
    ingest_paths_parallel,
)
from ..model import Visibility
from .common import AppContext, console, err_console, pictured, styled

__all__ = ["document_record", "ingest"]


def document_record(outcome: FileOutcome) -> dict[str, Any]:
    """What the line and the JSON line say of one document."""
    record: dict[str, Any] = {
        "file": str(outcome.path),
        "status": outcome.status,
        "doc_id": outcome.doc_id,
        "pages": outcome.pages,
        "chunks": outcome.chunks,
        "seconds": round(outcome.times.total, 2),
    }
    if outcome.status == "failed":
        record["reason"], record["message"] = outcome.reason, outcome.message
    if outcome.ocr_pages:
        record["ocr_pages"] = outcome.ocr_pages
    return record


def document_line(outcome: FileOutcome) -> str:
    """One document as one line: ``ingested FILE: 12 pages, 40 chunks, 3.1 s``, or the
    failure and its reason."""
    if outcome.status == "failed":
        return f"failed {outcome.path}: {outcome.reason}: {outcome.message}"
    if outcome.status == "unchanged":
        return f"unchanged {outcome.path}: already in the index"
    ocr = f" ({outcome.ocr_pages} read by OCR)" if outcome.ocr_pages else ""
    return (
        f"ingested {outcome.path}: {outcome.pages} pages{ocr}, {outcome.chunks} chunks, "
        f"{outcome.times.total:.1f} s"
    )


def print_lines(event: IngestEvent) -> None:
    if isinstance(event, RunStarted):
        click.echo(f"{len(event.files)} files, {event.todo} to ingest ({event.pages_total} pages)")
    elif isinstance(event, DocumentDone):
        click.echo(document_line(event.outcome))


def print_json(event: IngestEvent) -> None:
    if isinstance(event, RunStarted):
        record: dict[str, Any] = {
            "event": "start",
            "files": len(event.files),
            "todo": event.todo,
            "pages_total": event.pages_total,
        }
    elif isinstance(event, DocumentDone):
        record = {"event": "document", **document_record(event.outcome)}
    else:
        return
    click.echo(json.dumps(record))


class PageBar:
    """A rich progress bar of the run's pages (done of total, with an ETA) and the file at
    work; a document's pages count as done as it is embedded."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("[bold]ingest"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pages"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.description}", markup=False),  # a file name is text
            console=err_console,
            transient=True,
        )
        self.task: TaskID | None = None
        self.finished = 0  # pages of the documents done
        self.current: dict[Path, int] = {}  # pages of the document at work, by stage "embed"

    def __call__(self, event: IngestEvent) -> None:
        if isinstance(event, RunStarted):
            self.task = self.progress.add_task("", total=max(1, event.pages_total))
        elif self.task is None:
            return
        elif isinstance(event, PagesDone) and event.stage in ("embed", "store"):
            self.current[event.path] = event.done
            done = self.finished + sum(self.current.values())
            self.progress.update(self.task, completed=done, description=pictured(event.path.name))
        elif isinstance(event, PagesDone):
            stage = f"ocr {event.done}/{event.total}" if event.stage == "ocr" else event.stage
            self.progress.update(self.task, description=f"{pictured(event.path.name)} ({stage})")
        elif isinstance(event, DocumentDone) and event.outcome.status != "unchanged":
            pages = max(event.outcome.pages, self.current.pop(event.outcome.path, 0))
            self.finished += pages
            self.progress.update(self.task, completed=self.finished)


def print_table(summary: IngestSummary) -> None:
    table = Table(title="ingest summary", show_lines=False)
    for column in ("file", "status", "pages", "chunks", "details"):
        table.add_column(column, overflow="fold")
    style = {"ingested": "green", "unchanged": "dim", "failed": "red"}
    for o in summary.outcomes:
        notes = []
        if o.status == "failed":
            notes.append(f"{o.reason}: {o.message}")
        if o.ligature_words_repaired:
            notes.append(f"{o.ligature_words_repaired} ligature words repaired")
        if o.ocr_pages:
            notes.append(f"{o.ocr_pages} page(s) read by OCR")
        notes.extend(w for w in o.warnings if "OCR" in w)
        table.add_row(
            str(o.path),
            styled((o.status, style[o.status])),
            str(o.pages) if o.pages else "",
            str(o.chunks) if o.chunks else "",
            "; ".join(notes),
        )
    console.print(table)


def _run(
    app: AppContext, paths: list[Path], options: IngestOptions, workers: int, on_event: OnEvent
) -> IngestSummary:
    with app.store(create=True) as store:
        if options.owner is not None:  # a user's name here; the index names users by their id
            user = store.user(options.owner)
            if user is None:
                raise InvalidInput(
                    f"no user {options.owner!r}: add them first (truthbase users add)"
                )
            options = replace(options, owner=user.id)
        if workers > 1:
            return ingest_paths_parallel(paths, store, options, workers=workers, on_event=on_event)
        return ingest_paths(paths, store, app.embedder, options, on_event=on_event)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=False))
@click.option(
    "--segments",
    "with_segments",
    is_flag=True,
    help="Also build each document's segment index (see `truthbase segments build`).",
)
@click.option(
    "--private-to",
    "private_to",
    default=None,
    metavar="USER",
    help="New documents are USER's, private to them (default: shared, the operator's).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=DEFAULT_WORKERS,
    show_default=True,
    help="Processes that extract and embed files in parallel (the index is written by this "
    "one, one transaction per document); 1 ingests in this process.",
)
@click.option(
    "--json-progress",
    is_flag=True,
    help="Write the progress as JSON lines on stdout (a start line, then one line per "
    "document: file, status, pages, chunks, seconds, reason) instead of a bar and a table.",
)
@click.pass_obj
def ingest(
    app: AppContext,
    paths: tuple[Path, ...],
    with_segments: bool,
    private_to: str | None,
    workers: int,
    json_progress: bool,
) -> None:
    """Ingest PDF and EPUB files, and folders of them (recursively).

    Idempotent: a file whose bytes are already in the index is skipped, so an interrupted run
    started again goes on with the documents not stored yet. One transaction per document: a
    failing file is reported with its reason and leaves the index as it was. Exits 1 when any
    file failed. New documents are shared (every user sees them), the operator's;
    `--private-to USER` makes them USER's own, seen by nobody else (but admins). On a terminal
    a progress bar shows the pages done; otherwise each document is one line as it ends.
    """
    fix_mmap_threshold()  # an ingest process: before the embedder loads (see truthbase.heap)
    visibility: Visibility = "private" if private_to is not None else "shared"
    options = IngestOptions.from_settings(app.settings, owner=private_to, visibility=visibility)
    terminal = console.is_terminal and not json_progress
    if json_progress:
        summary = _run(app, list(paths), options, workers, print_json)
    elif terminal:
        bar = PageBar()
        with bar.progress:
            summary = _run(app, list(paths), options, workers, bar)
    else:
        summary = _run(app, list(paths), options, workers, print_lines)
    segment_rows: list[dict[str, Any]] = []
    if with_segments:
        from .segments import build_with_progress

        done = [o.doc_id for o in summary.outcomes if o.status != "failed" and o.doc_id]
        with app.store(create=True) as store:
            segment_rows = build_with_progress(app, store, done, None, rebuild=False)
    counts = {s: summary.count(s) for s in ("ingested", "unchanged", "failed")}
    if json_progress:
        click.echo(json.dumps({"event": "summary", **counts}))
    else:
        if terminal:
            print_table(summary)
        console.print(
            f"{counts['ingested']} ingested, {counts['unchanged']} unchanged, "
            f"{counts['failed']} failed"
        )
    if segment_rows:
        from .segments import print_build_rows

        print_build_rows(segment_rows)
    if summary.failed:
        sys.exit(1)
