"""`jobs list` and `worker`: the ingest jobs and the processes that run them."""

from __future__ import annotations

import json
import signal
import threading
import time
from datetime import UTC, datetime
from typing import Any

import click
from rich.table import Table

from .common import AppContext, console


@click.group("jobs")
def jobs_group() -> None:
    """Ingest jobs (uploads from the Library page, re-ingests)."""


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


@jobs_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=50,
    show_default=True,
    help="The newest this many jobs.",
)
@click.pass_obj
def jobs_list(app: AppContext, as_json: bool, limit: int) -> None:
    """The newest jobs: state (queued, running with stage and pages, done, failed with the
    reason), file, owner, attempts, worker."""
    with app.store() as store:
        listed = store.jobs(limit=limit)
    if as_json:
        click.echo(json.dumps([j.to_json() for j in listed], indent=2))
        return
    table = Table("id", "state", "progress", "file", "owner", "tries", "worker", "updated")
    for j in listed:
        if j.state == "running":
            progress = f"{j.stage or ''} {j.pages_done}/{j.pages_total}".strip()
        elif j.state == "failed":
            progress = f"{j.reason}: {j.message or ''}"
        elif j.state == "done":
            progress = f"document {(j.doc_id or '')[:12]}"
        else:
            progress = ""
        table.add_row(
            str(j.id),
            j.state,
            progress,
            j.filename,
            j.shown_owner or "-",
            f"{j.attempts}/{j.max_attempts}",
            j.worker or "-",
            _when(j.updated_at),
        )
    console.print(table)
    if not listed:
        console.print("no jobs yet")


@click.command("worker")
@click.option("--name", default=None, help="Worker name in the jobs table [default host:pid].")
@click.option(
    "--exit-when-idle", is_flag=True, help="Stop once no job is left (batch runs, benchmarks)."
)
@click.option("--max-jobs", type=click.IntRange(1), default=None, help="Stop after this many.")
@click.pass_obj
def worker_command(
    app: AppContext, name: str | None, exit_when_idle: bool, max_jobs: int | None
) -> None:
    """Run ingest jobs from the index's queue until stopped (Ctrl-C, SIGTERM). On PostgreSQL,
    workers on any number of machines share the queue (each job claimed by one, with
    FOR UPDATE SKIP LOCKED); they need the same data folder (library.data_dir) as the server."""
    from ..ingest.worker import WorkerOptions, work, worker_name

    options = WorkerOptions.from_settings(app.settings)
    stop = threading.Event()

    def on_signal(*_: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    worker = name or worker_name("cli")
    started = time.perf_counter()
    with app.store(create=True) as store:
        ran = work(
            store,
            lambda: app.embedder,
            options,
            worker=worker,
            stop=stop,
            max_jobs=max_jobs,
            exit_when_idle=exit_when_idle,
        )
    click.echo(f"{worker}: {ran} jobs in {time.perf_counter() - started:.1f} s")
