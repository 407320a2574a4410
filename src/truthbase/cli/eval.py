"""`eval retrieval`, `eval tune`, `eval answers` and `eval claims`: measurements against a golden
set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..eval.golden import GoldenSet, default_corpus_root, load_golden
from ..eval.metrics import METRIC_NAMES
from ..eval.retrieval import PreparedCorpus, evaluate_retrieval, prepare_corpus, tune_retrieval
from ..records import ANSWER_MODES
from ..store import Store
from .common import AppContext, console, err_console, run_metadata


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
        if name in prepared.failed_documents:
            err_console.print(
                f"[yellow]missing document[/] {name} (its questions count as misses): {why}"
            )
        else:
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


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and answers against a golden set."""


def _write_report(json_out: Path | None, report: dict[str, Any]) -> None:
    """The full report as JSON, when --json names a file."""
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2) + "\n")
        console.print(f"written: {json_out}")


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
    Questions on a document whose ingest fails count as misses (the document is reported
    missing); questions on documents that are not tried (a kind that cannot be ingested, a
    missing file) are listed as skipped. On a set with capability tags (ocr, german, table,
    cjk) the metrics are also shown per tag.
    """
    with app.store() as store:
        golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
        report = evaluate_retrieval(golden, prepared, store, app.embedder, app.settings.retrieval)
    report = {**run_metadata(), "golden": str(golden_path), **report}
    console.print(_metrics_table(f"retrieval on {report['questions']} questions", report["modes"]))
    for kind, row in report["by_kind"]["hybrid"].items():
        console.print(
            f"hybrid on {kind} questions ({int(row['n'])}): "
            + ", ".join(f"{name} {row[name]:.3f}" for name in METRIC_NAMES)
        )
    for tag, rows in report.get("by_capability", {}).items():
        modes = {mode: row for mode, row in rows.items() if mode != "n"}
        console.print(_metrics_table(f"{tag} questions ({int(rows['n'])})", modes))
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
    _write_report(json_out, report)


@eval_group.command(name="tune")
@_golden_option
@_corpus_root_option
@_json_out_option
@click.option(
    "--folds",
    type=click.IntRange(2, 20),
    default=5,
    show_default=True,
    help="Folds of the cross-validation (each configuration scored on every held-out fold).",
)
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
    them the defaults in config/ together with the JSON report under docs/evals/.
    """
    with app.store() as store:
        golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
        report = tune_retrieval(
            golden, prepared, store, app.embedder, app.settings.retrieval, folds=folds
        )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    chosen = report["chosen"]
    console.print(
        _metrics_table(
            f"{report['configurations']} configurations, {folds}-fold cross-validation",
            {"cross-validated": report["cross_validated"], "chosen, full set": chosen["full_set"]},
        )
    )
    console.print(
        f"chosen: rrf_k={chosen['rrf_k']:g} fts_weight={chosen['fts_weight']:g} "
        f"dense_weight={chosen['dense_weight']:g} late_weight={chosen['late_weight']:g} "
        f"prf_weight={chosen['prf_weight']:g}"
    )
    _write_report(json_out, report)


@eval_group.command(name="answers")
@_golden_option
@_corpus_root_option
@_json_out_option
@click.option(
    "--mode",
    type=click.Choice(ANSWER_MODES),
    default=None,
    help="Who answers, as for `ask` [default: llm when llm.base_url is set, else extractive].",
)
@click.pass_obj
def eval_answers(
    app: AppContext,
    golden_path: Path,
    corpus_root: Path | None,
    json_out: Path | None,
    mode: str | None,
) -> None:
    """Refusals, answers, correct citations, citation precision and verified share.

    A citation is correct when its span overlaps a golden quote on the right page (for table
    evidence: when its span holds every cell of the row); on a set with capability tags the
    metrics are also shown per tag, with the share of table questions whose citations hold
    all the row's cells;
    verified_share re-checks every citation marked verified against the stored page text;
    supported_share is the share of those whose claim also passes the support checks.
    """
    from ..answer import answerer_for, resolve_mode
    from ..eval.answers import evaluate_answers

    chosen = resolve_mode(mode, app.settings.llm)
    with app.store() as store:
        golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
        with err_console.status("answering") as status:
            report = evaluate_answers(
                golden,
                prepared,
                store,
                app.embedder,
                app.settings.retrieval,
                answerer=answerer_for(
                    app.settings.llm, app.settings.extractive, app.embedder, chosen
                ),
                on_question=lambda qid: status.update(f"answering {qid}"),
            )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    _print_answer_report(report)
    _write_report(json_out, report)


def _print_answer_report(report: dict[str, Any]) -> None:
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
        console.print(f"[yellow]skipped[/] {item['id']}: {item['reason']}")


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


@eval_group.command(name="claims")
@click.option(
    "--golden",
    "golden_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A golden set: the perturbation benchmark on its quotes.",
)
@click.option(
    "--claims",
    "claims_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A claim set (format of shared/golden/CLAIMS.md): hand-written claims about quotes.",
)
@click.option(
    "--judge",
    type=click.Choice(["off", "auto", "llm"]),
    default=None,
    help="With --claims: the model judge after the deterministic checks (each claim is "
    "reported with and without it) [default: the setting support.judge].",
)
@click.option(
    "--per-kind",
    type=click.IntRange(min=1),
    default=None,
    help="With --claims: a stratified subset, this many claims of each kind spread over the "
    "file [default: every claim].",
)
@_corpus_root_option
@_json_out_option
@click.pass_obj
def eval_claims(
    app: AppContext,
    golden_path: Path | None,
    claims_path: Path | None,
    judge: str | None,
    per_kind: int | None,
    corpus_root: Path | None,
    json_out: Path | None,
) -> None:
    """The support checks on claims built from each golden quote (--golden): faithful ones (the
    quote, the quote without a clause) must stay supported, perturbed ones (a number changed, a
    negation inserted or removed, a named term swapped, an unrelated sentence of the same
    document) must be caught; per kind and per half of the questions. With --claims, on a set
    of hand-written claims: the share of supported claims kept and of unsupported ones caught,
    per kind, with the score threshold fitted and cross-validated; --judge adds the model judge
    (issue 24), reported beside the deterministic verdicts of the same claims."""
    if (golden_path is None) == (claims_path is None):
        raise click.UsageError("give exactly one of --golden FILE and --claims FILE")
    if claims_path is not None:
        from .claim_set import run_claim_set

        report = run_claim_set(app, claims_path, corpus_root, judge=judge, per_kind=per_kind)
        _write_report(json_out, report)
        return
    if judge is not None or per_kind is not None:
        raise click.UsageError("--judge and --per-kind go with --claims")
    assert golden_path is not None
    from ..eval.claims import FAITHFUL_KINDS, evaluate_claims

    with app.store() as store:
        golden, prepared = _prepare_eval(app, store, golden_path, corpus_root)
        with err_console.status("checking claims") as status:
            report = evaluate_claims(
                golden,
                prepared,
                store,
                app.embedder,
                on_question=lambda qid: status.update(f"checking claims of {qid}"),
            )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    table = Table(title=f"claims of {report['questions']} questions")
    for column in ("kind", "claims", "share", "half a", "half b"):
        table.add_column(column, justify="left" if column == "kind" else "right")

    def share(row: dict[str, Any], kind: str) -> str:
        value = row["supported"] if kind in FAITHFUL_KINDS else row["caught"]
        return f"{value:.3f}" if row["n"] else "-"

    halves = report["halves"]
    for kind, row in report["by_kind"].items():
        label = f"{kind} ({'kept' if kind in FAITHFUL_KINDS else 'caught'})"
        table.add_row(
            label,
            str(row["n"]),
            share(row, kind),
            *(share(halves[h]["by_kind"][kind], kind) for h in ("a", "b")),
        )
    for name, label in (
        ("faithful_supported", "faithful kept"),
        ("perturbations_caught", "perturbations caught"),
    ):
        table.add_row(
            f"[bold]{label}[/]",
            str(report["faithful" if name == "faithful_supported" else "perturbations"]),
            f"{report[name]:.3f}",
            *(f"{halves[h][name]:.3f}" for h in ("a", "b")),
        )
    console.print(table)
    for item in report["quotes_not_found"]:
        console.print(f"[yellow]quote not found[/] {item['id']} ({item['doc']})")
    for qid in report["skipped"]:
        console.print(f"[yellow]skipped[/] {qid}: its document is not indexed")
    _write_report(json_out, report)


@eval_group.command(name="conversations")
@_golden_option
@_corpus_root_option
@_json_out_option
@click.option(
    "--as-written",
    is_flag=True,
    help="Ask every follow-up as written, without resolving it against the earlier turns "
    "(the baseline the resolution is measured against).",
)
@click.pass_obj
def eval_conversations(
    app: AppContext,
    golden_path: Path,
    corpus_root: Path | None,
    json_out: Path | None,
    as_written: bool,
) -> None:
    """R@8, answers with a correct citation and refusals of follow-up questions, beside the
    first turns, on a conversation golden set (shared/golden/CONVERSATIONS.md).

    Each turn is asked with the earlier turns as history, their answers being the ones this
    run gave. Follow-ups are reported per kind (pronoun, ellipsis, comparison, drill-down,
    topic-shift, unanswerable), and topic shifts beside the same questions asked alone.
    Extractive answers resolve follow-ups without a model; with an LLM configured, its
    standalone rewrite (llm.followup_rewrite) is used and the LLM answers.
    """
    from ..answer import answerer_for, resolve_mode
    from ..eval.conversations import evaluate_conversations, load_conversations
    from ..llm.chain import load_stage_model

    conversations, golden = load_conversations(golden_path)
    root = corpus_root if corpus_root is not None else default_corpus_root(golden_path)
    chosen = resolve_mode(None, app.settings.llm)
    llm = app.settings.llm
    model = load_stage_model(llm) if llm.followup_rewrite and chosen != "extractive" else None
    with app.store() as store:
        with err_console.status("ingesting the set's documents"):
            prepared = prepare_corpus(golden, root, store, app.embedder, app.settings.chunking)
        for name, why in prepared.skipped_documents.items():
            err_console.print(f"[yellow]missing document[/] {name}: {why}")
        with err_console.status("asking") as status:
            report = evaluate_conversations(
                conversations,
                golden,
                prepared,
                store,
                app.embedder,
                app.settings.retrieval,
                resolve=not as_written,
                model=model,
                answerer=answerer_for(llm, app.settings.extractive, app.embedder, chosen),
                on_turn=lambda turn: status.update(f"asking {turn}"),
            )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    _print_conversations(report)
    _write_report(json_out, report)


def _conversation_row(table: Table, name: str, row: dict[str, Any]) -> None:
    def cell(key: str) -> str:
        value = row.get(key)
        return "-" if value is None else f"{value:.3f}"

    table.add_row(
        name,
        str(row["n"]),
        cell("recall@8"),
        cell("answered_with_correct_citation"),
        cell("unanswerable_refused"),
    )


def _print_conversations(report: dict[str, Any]) -> None:
    table = Table(title=f"conversations ({report['conversations']})")
    for column in ("turns", "n", "R@8", "correct citation", "unanswerable refused"):
        table.add_column(column, justify="left" if column == "turns" else "right")
    _conversation_row(table, "first turns", report["first_turns"])
    _conversation_row(table, "follow-ups", report["follow_ups"])
    for kind, row in report["follow_ups"]["by_kind"].items():
        _conversation_row(table, f"  {kind}", row)
    shifts = report["topic_shifts"]
    _conversation_row(table, "topic shifts in thread", shifts["in_thread"])
    _conversation_row(table, "topic shifts alone", shifts["asked_alone"])
    console.print(table)
    detection = report["topic_shift_detection"]
    console.print(
        f"new-topic rule on the golden threads ({detection['cases']} follow-ups, "
        f"{detection['topic_shifts']} topic shifts), balanced accuracy: "
        f"{detection['default_settings']:.3f} with the defaults, "
        f"{detection['cross_validated']:.3f} cross-validated ({detection['folds']} folds)"
    )
