"""`segments build` and `segments list`: the segment index of each document (segments/*)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..cite.verify import resolve_document
from ..config import SUMMARIZER_CHOICES
from ..store import Store
from .common import AppContext, console, err_console, pictured, snippet


class _DocumentBar:
    """One document's progress bar, added when its segments are being built (not when cached)."""

    def __init__(self, progress: Progress, name: str) -> None:
        self.progress = progress
        self.name = name
        self.task: Any = None

    def start(self, _: str, total: int) -> None:
        self.task = self.progress.add_task(self.name, total=total)

    def advance(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, advance=1)


def build_with_progress(
    app: AppContext, store: Store, doc_ids: Sequence[str], summarizer: str | None, rebuild: bool
) -> list[dict[str, Any]]:
    """Build (or load from the cache) each document's segment index, with a progress bar per
    document being summarized; one row per document for the summary table."""
    from ..llm.chain import load_chat_model
    from ..segments.index import ensure_segments, resolve_summarizer, summarizer_id

    settings = app.settings
    model = load_chat_model(settings.llm)
    kind = resolve_summarizer(settings.segments, settings.llm, summarizer, model)
    titles = {d.id: d.title for d in store.list_documents()}
    progress = Progress(
        TextColumn("[bold]segments"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),  # a file name is text
        console=err_console,
        transient=True,
    )
    rows: list[dict[str, Any]] = []
    with progress:
        for doc_id in doc_ids:
            bar = _DocumentBar(progress, pictured(snippet(titles.get(doc_id, doc_id), 40)))
            started = time.perf_counter()
            stored = ensure_segments(
                store,
                doc_id,
                app.embedder,
                settings.segments,
                settings.llm,
                kind=kind,
                model=model if kind == "llm" else None,
                rebuild=rebuild,
                on_start=bar.start,
                on_step=bar.advance,
            )
            writers = sorted({s.summarizer for s in stored.segments})
            rows.append(
                {
                    "doc_id": doc_id,
                    "title": titles.get(doc_id, doc_id),
                    "summarizer": summarizer_id(kind, settings.llm),
                    "written_by": writers,
                    "segments": len(stored.segments),
                    "built": bar.task is not None,
                    "seconds": round(time.perf_counter() - started, 2),
                }
            )
    return rows


def print_build_rows(rows: list[dict[str, Any]]) -> None:
    table = Table(title="segment index")
    for column in ("document", "segments", "summarizer", "status", "seconds"):
        table.add_column(column, overflow="fold")
    for row in rows:
        writers = ", ".join(row["written_by"])
        summarizer = row["summarizer"]
        if writers and writers != summarizer:
            summarizer = f"{summarizer} (written by {writers})"
        table.add_row(
            row["title"],
            str(row["segments"]),
            summarizer,
            "built" if row["built"] else "cached",
            f"{row['seconds']:.2f}",
        )
    console.print(table)


@click.group(name="segments")
def segments_group() -> None:
    """The segment index: each document cut by its table of contents (else by size), each
    segment with a summary that carries position tags; the book tools read it."""


_summarizer_option = click.option(
    "--summarizer",
    type=click.Choice(SUMMARIZER_CHOICES),
    default=None,
    help="Who writes the summaries [default: segments.summarizer; auto: llm when llm.base_url "
    "is set, else extractive].",
)


@segments_group.command(name="build")
@click.option("--doc", "doc", default=None, metavar="ID", help="Only this document (id prefix).")
@_summarizer_option
@click.option("--rebuild", is_flag=True, help="Rebuild even when a current index is cached.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def build_command(
    app: AppContext, doc: str | None, summarizer: str | None, rebuild: bool, as_json: bool
) -> None:
    """Build the segment index of every document (or one), with a progress bar.

    Cached per document and summarizer: a current index is kept unless --rebuild.
    """
    with app.store() as store:
        doc_ids = [resolve_document(store, doc)] if doc else [d.id for d in store.list_documents()]
        rows = build_with_progress(app, store, doc_ids, summarizer, rebuild)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print("No documents yet: run `truthbase ingest PATH`.")
        return
    print_build_rows(rows)


@segments_group.command(name="list")
@click.argument("doc", metavar="DOC")
@_summarizer_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON with parts and summaries.")
@click.pass_obj
def list_command(app: AppContext, doc: str, summarizer: str | None, as_json: bool) -> None:
    """The segments of document DOC (id or unique id prefix): index, title, size and the start
    of the summary. Builds the index first when it is missing."""
    with app.store() as store:
        doc_id = resolve_document(store, doc)
        build_with_progress(app, store, [doc_id], summarizer, rebuild=False)
        from ..llm.chain import load_chat_model
        from ..segments.index import resolve_summarizer, summarizer_id

        settings = app.settings
        model = load_chat_model(settings.llm)
        kind = resolve_summarizer(settings.segments, settings.llm, summarizer, model)
        stored = store.segments(doc_id, summarizer_id(kind, settings.llm))
    segments = stored.segments if stored is not None else []
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "index": s.index,
                        "title": s.title,
                        "size": sum(p.end - p.start for p in s.parts),
                        "parts": [[p.unit, p.start, p.end] for p in s.parts],
                        "summary": s.summary,
                        "summarizer": s.summarizer,
                    }
                    for s in segments
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    table = Table(title=f"{len(segments)} segments of {doc_id[:12]}")
    for column in ("#", "title", "size", "units", "summary"):
        table.add_column(column, overflow="fold")
    for s in segments:
        units = f"{s.parts[0].unit}-{s.parts[-1].unit}" if s.parts else ""
        table.add_row(
            str(s.index),
            s.title,
            str(sum(p.end - p.start for p in s.parts)),
            units,
            snippet(s.summary, 160),
        )
    console.print(table)
