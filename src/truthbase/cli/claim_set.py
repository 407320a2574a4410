"""`eval claims --claims FILE`: the support checks on a hand-written claim set
(:mod:`truthbase.eval.claim_set`), its documents ingested into the configured index first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from ..eval.claim_set import (
    SUPPORTED_KINDS,
    evaluate_claim_set,
    load_claim_set,
    locate_items,
    store_pages,
)
from ..ingest import IngestOptions, ingest_file
from .common import AppContext, console, err_console, run_metadata

__all__ = ["run_claim_set"]


def run_claim_set(app: AppContext, path: Path, corpus_root: Path | None) -> dict[str, Any]:
    """Ingest the set's documents, check every claim, print the table; the report."""
    documents, items = load_claim_set(path)
    root = corpus_root if corpus_root is not None else path.absolute().parent.parent
    with app.store() as store:
        with err_console.status("ingesting the claim set's documents") as status:
            for name, relative in documents.items():
                status.update(f"ingesting {name}")
                outcome = ingest_file(
                    root / relative,
                    store,
                    app.embedder,
                    IngestOptions.from_settings(app.settings),
                )
                if outcome.doc_id is None:
                    err_console.print(f"[yellow]missing document[/] {name}: {outcome.message}")

        page_text, names = store_pages([store], documents)
        located, missing = locate_items(items, page_text, names)
        with err_console.status("checking claims") as status:
            report = evaluate_claim_set(
                located, app.embedder, on_item=lambda i: status.update(f"checking {i}")
            )
    report = {**run_metadata(), "claims": str(path), "quotes_not_found": missing, **report}
    _print(report)
    return report


def _print(report: dict[str, Any]) -> None:
    cv = report["threshold"]
    table = Table(title=f"claims of {report['items']} items")
    for column in ("kind", "claims", "share", "cross-validated"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, row in report["by_kind"].items():
        name = "kept" if kind in SUPPORTED_KINDS else "caught"
        table.add_row(
            f"{kind} ({name})",
            str(row["n"]),
            f"{row[name]:.3f}" if row["n"] else "-",
            f"{cv['cv_by_kind'][kind][name]:.3f}" if row["n"] else "-",
        )
    table.add_row(
        "[bold]supported kept[/]",
        str(report["supported_claims"]),
        f"{report['kept']:.3f}",
        f"{cv['cv_kept']:.3f}",
    )
    table.add_row(
        "[bold]unsupported caught[/]",
        str(report["unsupported_claims"]),
        f"{report['caught']:.3f}",
        f"{cv['cv_caught']:.3f}",
    )
    console.print(table)
    console.print(
        f"score threshold: fitted {cv['fitted']}; cross-validated ({cv['folds']} folds by item "
        f"x {len(cv['seeds'])} seeds) thresholds {cv['cv_thresholds'][0]}..{cv['cv_thresholds'][1]}"
    )
    for item in report["quotes_not_found"]:
        console.print(f"[yellow]quote not found[/] {item}")
