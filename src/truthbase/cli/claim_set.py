"""`eval claims --claims FILE`: the support checks on a hand-written claim set
(:mod:`truthbase.eval.claim_set`), its documents ingested into the configured index first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from ..eval.claim_set import (
    SUPPORTED_KINDS,
    evaluate_claim_set,
    load_claim_set,
    locate_items,
    store_pages,
)
from ..ingest import IngestOptions, ingest_file
from ..llm.judge import judge_for
from .common import AppContext, console, err_console, run_metadata, styled

__all__ = ["run_claim_set"]


def run_claim_set(
    app: AppContext,
    path: Path,
    corpus_root: Path | None,
    *,
    judge: str | None = None,
    per_kind: int | None = None,
) -> dict[str, Any]:
    """Ingest the set's documents, check every claim (with the model judge that ``judge``, else
    the setting ``support.judge``, asks for), print the table; the report."""
    settings = app.settings
    model_judge = judge_for(settings.support, settings.llm, choice=judge)
    documents, items = load_claim_set(path)
    root = corpus_root if corpus_root is not None else path.absolute().parent.parent
    with app.store(create=True) as store:
        with err_console.status("ingesting the claim set's documents") as status:
            for name, relative in documents.items():
                status.update(styled(f"ingesting {name}"))
                outcome = ingest_file(
                    root / relative,
                    store,
                    app.embedder,
                    IngestOptions.from_settings(app.settings),
                )
                if outcome.doc_id is None:
                    err_console.print(
                        styled(("missing document", "yellow"), f" {name}: {outcome.message}")
                    )

        page_text, names = store_pages([store], documents)
        located, missing = locate_items(items, page_text, names)
        with err_console.status("checking claims") as status:
            report = evaluate_claim_set(
                located,
                app.embedder,
                judge=model_judge,
                per_kind=per_kind,
                on_item=lambda i: status.update(styled(f"checking {i}")),
            )
    report = {**run_metadata(), "claims": str(path), "quotes_not_found": missing, **report}
    _print(report)
    return report


def _fitted(cv: dict[str, Any]) -> str:
    low, high = cv["cv_thresholds"]
    return (
        f"fitted {cv['fitted']}; cross-validated ({cv['folds']} folds by item x "
        f"{len(cv['seeds'])} seeds) thresholds {low}..{high}"
    )


def _print(report: dict[str, Any]) -> None:
    judged = report.get("judge")
    plain = judged["without_judge"] if judged else None
    # With the judge, its threshold (judge_min_p) is the one cross-validated beside its shares;
    # without log-probabilities it has none, and the column repeats the deterministic one's.
    cv = (judged and judged.get("min_p")) or report["threshold"]
    score_cv = report["threshold"]
    table = Table(title=f"claims of {report['items']} items")
    columns = ["kind", "claims", "share", "cross-validated"]
    if plain is not None:
        columns.insert(3, "without judge")
    for column in columns:
        table.add_column(column, justify="left" if column == "kind" else "right")

    def row(label: str | Text, n: int, name: str, value: float, cv_value: float, base: Any) -> None:
        cells = [label, str(n), f"{value:.3f}" if n else "-", f"{cv_value:.3f}" if n else "-"]
        if plain is not None:
            cells.insert(3, f"{base:.3f}" if n else "-")
        table.add_row(*cells)

    for kind, counts in report["by_kind"].items():
        name = "kept" if kind in SUPPORTED_KINDS else "caught"
        base = plain["by_kind"][kind][name] if plain else None
        row(f"{kind} ({name})", counts["n"], name, counts[name], cv["cv_by_kind"][kind][name], base)
    for name, label, n in (
        ("kept", "supported kept", report["supported_claims"]),
        ("caught", "unsupported caught", report["unsupported_claims"]),
    ):
        row(styled((label, "bold")), n, name, report[name], cv[f"cv_{name}"], plain and plain[name])
    console.print(table)
    console.print(f"score threshold: {_fitted(score_cv)}")
    if judged:
        console.print(
            f"judge {judged['name']}: asked {judged['asked']}, failed {judged['failed']}, "
            f"{judged['seconds_per_claim']:.1f} s per claim"
        )
        if judged.get("min_p"):
            console.print(f"judge_min_p (P(true) at the verdict): {_fitted(judged['min_p'])}")
        else:
            console.print("the judge's server gave no log-probabilities: its written verdicts")
    for item in report["quotes_not_found"]:
        console.print(styled(("quote not found", "yellow"), f" {item}"))
