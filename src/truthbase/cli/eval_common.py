"""What the `eval` commands share: the golden options, ingesting a set's documents into its
index, the report tables and the JSON report file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..eval.golden import GoldenSet, default_corpus_root, load_golden
from ..eval.metrics import METRIC_NAMES
from ..eval.retrieval import PreparedCorpus, prepare_corpus
from ..ingest import FileOutcome
from ..store import Store, open_store
from .common import AppContext, console, err_console, styled, write_text_file
from .ingest import document_line


def prepare_eval(
    app: AppContext, store: Store, golden_path: Path, corpus_root: Path | None
) -> tuple[GoldenSet, PreparedCorpus]:
    golden = load_golden(golden_path)
    root = corpus_root if corpus_root is not None else default_corpus_root(golden_path)
    return golden, ingest_golden_documents(app, store, golden, root)


def ingest_golden_documents(
    app: AppContext, store: Store, golden: GoldenSet, root: Path
) -> PreparedCorpus:
    """The set's documents ingested into ``store`` (those already there are left as they
    are), with progress: on a terminal a status line ("ingesting memman (12 of 157)"),
    otherwise one line per document ingested or failed as it ends (a library takes most of an
    hour; a log must tell a long ingest from a hung one). Missing and skipped documents are
    reported after."""
    total = len(golden.documents)
    turn = 0

    def line(name: str, outcome: FileOutcome) -> None:
        if outcome.status != "unchanged":
            err_console.print(f"[{turn}/{total}] {name}: {document_line(outcome)}", soft_wrap=True)

    with err_console.status("ingesting the golden set's documents") as status:

        def started(name: str) -> None:
            nonlocal turn
            turn += 1
            status.update(styled(f"ingesting {name} ({turn} of {total})"))

        prepared = prepare_corpus(
            golden,
            root,
            store,
            app.embedder,
            app.settings.chunking,
            on_document=started,
            on_outcome=None if err_console.is_terminal else line,
        )
    for name, why in prepared.skipped_documents.items():
        if name in prepared.failed_documents:
            err_console.print(
                styled(
                    ("missing document", "yellow"),
                    f" {name} (its questions count as misses): {why}",
                )
            )
        else:
            err_console.print(styled(("skipped document", "yellow"), f" {name}: {why}"))
    return prepared


def metrics_table(title: str, rows: dict[str, dict[str, float]]) -> Table:
    table = Table(title=title)
    table.add_column("mode")
    for name in METRIC_NAMES:
        table.add_column(name, justify="right")
    for mode, metrics in rows.items():
        table.add_row(mode, *(f"{metrics[name]:.3f}" for name in METRIC_NAMES))
    return table


golden_option = click.option(
    "--golden",
    "golden_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A golden set (format of shared/golden/README.md).",
)
corpus_root_option = click.option(
    "--corpus-root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder the golden document paths are relative to [default: the golden file's "
    "folder's parent].",
)
json_out_option = click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the full report as JSON to this file.",
)


goldens_option = click.option(
    "--golden",
    "golden_paths",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A golden set (format of shared/golden/README.md); repeat it to measure several sets "
    "at once (each set, and the pool; with --index-dir).",
)
index_dir_option = click.option(
    "--index-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A folder of SQLite indexes, one per golden set (NAME.sqlite for NAME.json), built "
    "on the first run and reused after; needed for several sets [default: one set, in --db].",
)


@contextmanager
def set_store(app: AppContext, golden_path: Path, index_dir: Path | None) -> Iterator[Store]:
    """The index a golden set is measured in: its own file in ``index_dir`` (each set's
    documents alone, as when it is measured by itself), else the one of --db."""
    if index_dir is None:
        with app.store(create=True) as store:
            yield store
        return
    index_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(index_dir / f"{golden_path.stem}.sqlite")
    try:
        yield store
    finally:
        store.close()


def write_report(json_out: Path | None, report: dict[str, Any]) -> None:
    """The full report as JSON, when --json names a file."""
    if json_out is not None:
        write_text_file(json_out, json.dumps(report, indent=2) + "\n")
        console.print(f"written: {json_out}")


def print_answer_report(report: dict[str, Any]) -> None:
    """The answer metrics as a table, then a line per question kind and capability, the weak
    outcomes, the refusal threshold's cross-validation and the skipped questions."""
    table = Table(title=f"answers on {report['questions']} questions ({report['answerer']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name in (
        "unanswerable_refused",
        "answered",
        "answered_with_correct_citation",
        "citation_precision",
        "false_refusals",
        "verified_share",
        "supported_share",
    ):
        value = report[name]
        table.add_row(name, str(value) if isinstance(value, int) else f"{value:.3f}")
    console.print(table)
    for kind, row in [*report["by_kind"].items(), *report.get("by_capability", {}).items()]:
        console.print(_kind_line(kind, row))
    console.print(
        f"weak (counted as refused; the closest passages shown): {report['weak_answerable']} "
        f"answerable, {report['weak_unanswerable']} unanswerable"
    )
    for cv in report["refusal_cv"]:
        if "skipped" in cv:
            continue
        console.print(_refusal_cv_line(cv))
    for item in report["skipped"]:
        console.print(styled(("skipped", "yellow"), f" {item['id']}: {item['reason']}"))


def _kind_line(kind: str, row: dict[str, Any]) -> str:
    """The answer metrics of one question kind (or capability tag) on one line."""
    return (
        f"{kind} questions ({row['n']}): answered {row['answered']:.3f}, with a correct "
        f"citation {row['answered_with_correct_citation']:.3f}, citation precision "
        f"{row['citation_precision']:.3f}, false refusals {row['false_refusals']}"
        + (
            f", citations hold the row's cells {row['cells_held']:.3f}"
            if "cells_held" in row
            else ""
        )
    )


def _refusal_cv_line(cv: dict[str, Any]) -> str:
    """One cross-validation of the refusal threshold, with the threshold fitted on all the
    questions when there is one."""
    fitted = cv.get("fitted")
    fitted_text = (
        f"; fitted threshold {fitted['threshold']}: false refusals "
        f"{fitted['false_refusal_rate']:.1%}, unanswerable answered "
        f"{fitted['unanswerable_answered_rate']:.1%}"
        if fitted
        else ""
    )
    return (
        f"refusal threshold cross-validated ({cv['folds']} folds x {len(cv['seeds'])} seeds, "
        f"{cv['objective']}): false refusals {cv['cv_false_refusal_rate']:.1%}, "
        f"unanswerable answered {cv['cv_unanswerable_answered_rate']:.1%}{fitted_text}"
    )
