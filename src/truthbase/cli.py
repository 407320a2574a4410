"""The `truthbase` command line: a thin shell over the library.

Settings are read here (environment, truthbase.toml, flags) and passed down.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .config import Settings
from .embed import Embedder, EmbedderMismatchError, EmbeddingError, load_embedder
from .eval.golden import GoldenError, GoldenSet, default_corpus_root, load_golden
from .eval.metrics import METRIC_NAMES
from .eval.retrieval import PreparedCorpus, evaluate_retrieval, prepare_corpus, tune_retrieval
from .ingest import FileOutcome, ingest_paths
from .model import SearchHit
from .retrieve.hybrid import MODES, search
from .store import Store, StoreError, open_store

console = Console()
err_console = Console(stderr=True)


class AppContext:
    """What every command needs, created lazily so `--help` stays fast."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._embedder: Embedder | None = None

    @contextmanager
    def store(self) -> Iterator[Store]:
        store = open_store(self.settings.db)
        try:
            yield store
        finally:
            store.close()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.settings.embedder)
        return self._embedder


def _fail(message: str, code: int = 2) -> None:
    err_console.print(f"[bold red]error:[/] {message}")
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The SQLite index file [env TRUTHBASE_DB; default ./truthbase.sqlite].",
)
@click.version_option(package_name="truthbase")
@click.pass_context
def cli(ctx: click.Context, db: Path | None) -> None:
    """TruthBase: answers from your PDFs, every citation one click from the exact passage.

    \b
    Typical use:
      truthbase --db my.sqlite ingest ~/papers
      truthbase --db my.sqlite search "what does GV.OC-01 require?"
    """
    try:
        settings = Settings() if db is None else Settings(db=db)
    except Exception as exc:  # pydantic's ValidationError names the bad variable
        _fail(f"invalid settings: {exc}")
    ctx.obj = AppContext(settings)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=False))
@click.pass_obj
def ingest(app: AppContext, paths: tuple[Path, ...]) -> None:
    """Ingest PDF files and folders (recursively).

    Idempotent: a file whose bytes are already in the index is skipped. One transaction per
    document: a failing file is reported with its reason and leaves the index as it was.
    Exits 1 when any file failed.
    """
    try:
        with app.store() as store:
            embedder = app.embedder
            progress = Progress(
                TextColumn("[bold]ingest"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=err_console,
                transient=True,
            )
            task_ids: list[Any] = []

            def on_start(files: list[Path]) -> None:
                task_ids.append(progress.add_task("", total=len(files)))

            def on_file(outcome: FileOutcome) -> None:
                progress.update(task_ids[0], advance=1, description=outcome.path.name)

            with progress:
                summary = ingest_paths(
                    list(paths),
                    store,
                    embedder,
                    app.settings.chunking,
                    on_start=on_start,
                    on_file=on_file,
                )
    except (StoreError, EmbedderMismatchError, EmbeddingError, ValueError) as exc:
        _fail(str(exc))
        return

    table = Table(title="ingest summary", show_lines=False)
    for column in ("file", "status", "pages", "chunks", "details"):
        table.add_column(column, overflow="fold")
    style = {"ingested": "green", "unchanged": "dim", "failed": "red"}
    for o in summary.outcomes:
        details = f"{o.reason}: {o.message}" if o.status == "failed" else ""
        if o.ligature_words_repaired:
            details = f"{o.ligature_words_repaired} ligature words repaired"
        table.add_row(
            str(o.path),
            f"[{style[o.status]}]{o.status}[/]",
            str(o.pages) if o.pages else "",
            str(o.chunks) if o.chunks else "",
            details,
        )
    console.print(table)
    console.print(
        f"{summary.count('ingested')} ingested, {summary.count('unchanged')} unchanged, "
        f"{summary.count('failed')} failed"
    )
    if summary.failed:
        sys.exit(1)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def docs(app: AppContext, as_json: bool) -> None:
    """List the ingested documents."""
    try:
        with app.store() as store:
            documents = store.list_documents()
    except StoreError as exc:
        _fail(str(exc))
        return
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": d.id,
                        "title": d.title,
                        "path": d.path,
                        "kind": d.kind,
                        "pages": d.unit_count,
                        "chunks": d.chunk_count,
                        "ingested_at": d.ingested_at,
                    }
                    for d in documents
                ],
                indent=2,
            )
        )
        return
    if not documents:
        console.print("No documents yet: run `truthbase ingest PATH`.")
        return
    table = Table(title=f"{len(documents)} documents in {app.settings.db}")
    for column in ("id", "title", "kind", "pages", "chunks", "path"):
        table.add_column(column, overflow="fold")
    for d in documents:
        table.add_row(d.id[:12], d.title, d.kind, str(d.unit_count), str(d.chunk_count), d.path)
    console.print(table)


def _hit_json(hit: SearchHit, rank: int) -> dict[str, Any]:
    c = hit.chunk
    return {
        "rank": rank,
        "score": hit.score,
        "doc_id": c.doc_id,
        "document": hit.document_title,
        "page": c.unit + 1,
        "chunk_id": c.id,
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "rects": [list(r) for r in c.rects],
        "arms": {
            arm: {"rank": hit.arm_ranks[arm], "score": hit.arm_scores.get(arm)}
            for arm in hit.arm_ranks
        },
    }


def _snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@cli.command(name="search")
@click.argument("query")
@click.option("--k", "k", type=click.IntRange(1, 100), default=None, help="Results [default 8].")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with text and rects.")
@click.option("--explain", is_flag=True, help="Show each arm's rank and score per result.")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="hybrid",
    show_default=True,
    help="Fuse both arms, or use one alone.",
)
@click.pass_obj
def search_command(
    app: AppContext, query: str, k: int | None, as_json: bool, explain: bool, mode: str
) -> None:
    """Rank passages for QUERY (full text + dense vectors, fused)."""
    try:
        with app.store() as store:
            result = search(
                store,
                app.embedder,
                query,
                app.settings.retrieval,
                k=k,
                mode=mode,  # type: ignore[arg-type]
            )
    except (StoreError, EmbedderMismatchError, EmbeddingError, ValueError) as exc:
        _fail(str(exc))
        return
    if as_json:
        click.echo(
            json.dumps(
                {
                    "query": query,
                    "fts_query": result.fts_query,
                    "results": [_hit_json(h, i) for i, h in enumerate(result.hits, 1)],
                },
                indent=2,
            )
        )
        return
    if not result.hits:
        console.print("No results. Is anything ingested? (`truthbase docs`)")
        return
    table = Table(title=f"{query!r}: {len(result.hits)} results ({mode})", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("document")
    table.add_column("page", justify="right")
    table.add_column("score", justify="right")
    if explain:
        table.add_column("fts rank/score")
        table.add_column("dense rank/score")
    table.add_column("snippet", overflow="fold")
    for i, hit in enumerate(result.hits, 1):
        row = [str(i), hit.document_title, str(hit.chunk.unit + 1), f"{hit.score:.4f}"]
        if explain:
            for arm in ("fts", "dense"):
                if arm in hit.arm_ranks:
                    row.append(f"{hit.arm_ranks[arm]} / {hit.arm_scores.get(arm, 0.0):.3f}")
                else:
                    row.append("-")
        row.append(_snippet(hit.chunk.text))
        table.add_row(*row)
    console.print(table)


def _run_metadata() -> dict[str, Any]:
    """When and on which commit an evaluation ran, for the files kept under docs/evals/."""
    import subprocess
    from datetime import UTC, datetime

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), "commit": commit}


def _prepare_eval(
    app: AppContext, store: Store, golden_path: Path, corpus_root: Path | None
) -> tuple[GoldenSet, PreparedCorpus]:
    golden = load_golden(golden_path)
    root = corpus_root if corpus_root is not None else default_corpus_root(golden_path)
    with err_console.status("ingesting the golden set's documents") as status:
        prepared = prepare_corpus(
            golden,
            root,
            store,
            app.embedder,
            app.settings.chunking,
            on_document=lambda name: status.update(f"ingesting {name}"),
        )
    for name, why in prepared.skipped_documents.items():
        err_console.print(f"[yellow]skipped document[/] {name}: {why}")
    return golden, prepared


def _metrics_table(title: str, rows: dict[str, dict[str, float]]) -> Table:
    table = Table(title=title)
    table.add_column("mode")
    for name in METRIC_NAMES:
        table.add_column(name, justify="right")
    for mode, metrics in rows.items():
        table.add_row(mode, *(f"{metrics[name]:.3f}" for name in METRIC_NAMES))
    return table


_golden_option = click.option(
    "--golden",
    "golden_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A golden set (format of shared/golden/README.md).",
)
_corpus_root_option = click.option(
    "--corpus-root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder the golden document paths are relative to [default: the golden file's "
    "folder's parent].",
)
_json_out_option = click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the full report as JSON to this file.",
)


@cli.group(name="eval")
def eval_group() -> None:
    """Measure retrieval against a golden set."""


@eval_group.command(name="retrieval")
@_golden_option
@_corpus_root_option
@_json_out_option
@click.pass_obj
def eval_retrieval(
    app: AppContext, golden_path: Path, corpus_root: Path | None, json_out: Path | None
) -> None:
    """Recall@1/5/8/15, MRR and nDCG@5 for fts-only, dense-only and hybrid retrieval.

    Ingests the golden set's documents into --db first (a no-op when they are there).
    Questions on documents that cannot be ingested are listed as skipped, never as misses.
    """
    try:
        with app.store() as store:
            golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
            report = evaluate_retrieval(
                golden, prepared, store, app.embedder, app.settings.retrieval
            )
    except (StoreError, EmbedderMismatchError, EmbeddingError, GoldenError, ValueError) as exc:
        _fail(str(exc))
        return
    report = {**_run_metadata(), "golden": str(golden_path), **report}
    console.print(_metrics_table(f"retrieval on {report['questions']} questions", report["modes"]))
    if report["misses"]:
        table = Table(title="hybrid misses (not found in the top 8)")
        for column in ("id", "expected", "rank", "ranked first"):
            table.add_column(column, overflow="fold")
        for miss in report["misses"]:
            expected = ", ".join(
                f"{e['doc']} p{e['page'] or e['section']}" for e in miss["expected"]
            )
            first = miss["first"]
            table.add_row(
                miss["id"],
                expected,
                str(miss["rank"] or "-"),
                f"{first['doc']} p{first['page']}: {first['text'][:80]}" if first else "-",
            )
        console.print(table)
    for item in report["skipped"]:
        console.print(f"[yellow]skipped[/] {item['id']}: {item['reason']}")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2) + "\n")
        console.print(f"written: {json_out}")


@eval_group.command(name="tune")
@_golden_option
@_corpus_root_option
@_json_out_option
@click.option("--folds", type=click.IntRange(2, 20), default=5, show_default=True)
@click.pass_obj
def eval_tune(
    app: AppContext,
    golden_path: Path,
    corpus_root: Path | None,
    json_out: Path | None,
    folds: int,
) -> None:
    """Grid over RRF k and arm weights with k-fold cross-validation; prints the best values.

    Put the chosen values into settings (TRUTHBASE_RETRIEVAL__RRF_K and the weights) or make
    them the defaults in config.py together with the JSON report under docs/evals/.
    """
    try:
        with app.store() as store:
            golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
            report = tune_retrieval(
                golden, prepared, store, app.embedder, app.settings.retrieval, folds=folds
            )
    except (StoreError, EmbedderMismatchError, EmbeddingError, GoldenError, ValueError) as exc:
        _fail(str(exc))
        return
    report = {**_run_metadata(), "golden": str(golden_path), **report}
    chosen = report["chosen"]
    console.print(
        _metrics_table(
            f"{report['configurations']} configurations, {folds}-fold cross-validation",
            {"cross-validated": report["cross_validated"], "chosen, full set": chosen["full_set"]},
        )
    )
    console.print(
        f"chosen: rrf_k={chosen['rrf_k']:g} fts_weight={chosen['fts_weight']:g} "
        f"dense_weight={chosen['dense_weight']:g}"
    )
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2) + "\n")
        console.print(f"written: {json_out}")


def main() -> None:
    cli(prog_name="truthbase")


if __name__ == "__main__":
    main()
