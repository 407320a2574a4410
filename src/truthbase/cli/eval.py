"""`eval retrieval`, `eval tune`, `eval answers` and `eval claims`: measurements against a golden
set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..eval.golden import default_corpus_root
from ..eval.metrics import METRIC_NAMES
from ..eval.retrieval import evaluate_retrieval, tune_retrieval
from ..records import ANSWER_MODES
from .common import AppContext, console, err_console, run_metadata, styled
from .eval_common import (
    corpus_root_option,
    golden_option,
    goldens_option,
    index_dir_option,
    ingest_golden_documents,
    json_out_option,
    metrics_table,
    prepare_eval,
    print_answer_report,
    set_store,
    write_report,
)
from .eval_sets import (
    answer_set,
    answers_across_sets,
    refusal_across_sets_cli,
    retrieval_across_sets,
    tune_across_sets,
)


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and answers against a golden set."""


@eval_group.command(name="retrieval")
@goldens_option
@corpus_root_option
@index_dir_option
@json_out_option
@click.pass_obj
def eval_retrieval(
    app: AppContext,
    golden_paths: tuple[Path, ...],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
) -> None:
    """Recall@1/5/8/15, MRR and nDCG@5 for fts-only, dense-only and hybrid retrieval.

    Ingests the golden set's documents into --db first (a no-op when they are there).
    Questions on a document whose ingest fails count as misses (the document is reported
    missing); questions on documents that are not tried (a kind that cannot be ingested, a
    missing file) are listed as skipped. On a set with capability tags (ocr, german, table,
    cjk) the metrics are also shown per tag. Several sets (--golden repeated, --index-dir):
    each set's hybrid row and the pool of all their questions.
    """
    if len(golden_paths) > 1:
        retrieval_across_sets(app, golden_paths, corpus_root, index_dir, json_out)
        return
    golden_path = golden_paths[0]
    with set_store(app, golden_path, index_dir) as store:
        golden, prepared = prepare_eval(app, store, golden_path, corpus_root)
        report = evaluate_retrieval(golden, prepared, store, app.embedder, app.settings.retrieval)
    report = {**run_metadata(), "golden": str(golden_path), **report}
    console.print(metrics_table(f"retrieval on {report['questions']} questions", report["modes"]))
    for kind, row in report["by_kind"]["hybrid"].items():
        console.print(
            f"hybrid on {kind} questions ({int(row['n'])}): "
            + ", ".join(f"{name} {row[name]:.3f}" for name in METRIC_NAMES)
        )
    for tag, rows in report.get("by_capability", {}).items():
        modes = {mode: row for mode, row in rows.items() if mode != "n"}
        console.print(metrics_table(f"{tag} questions ({int(rows['n'])})", modes))
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
        console.print(styled(("skipped", "yellow"), f" {item['id']}: {item['reason']}"))
    write_report(json_out, report)


@eval_group.command(name="tune")
@goldens_option
@corpus_root_option
@index_dir_option
@json_out_option
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
    golden_paths: tuple[Path, ...],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
    folds: int,
) -> None:
    """Grid over RRF k and arm weights with k-fold cross-validation; prints the best values.

    Put the chosen values into settings (TRUTHBASE_RETRIEVAL__RRF_K and the weights) or make
    them the defaults in config/ together with the JSON report under docs/evals/. Several sets
    (--golden repeated, --index-dir): leave-one-set-out cross-validation instead of folds
    (each set measured with the values chosen on the others, beside the values chosen on all).
    """
    if len(golden_paths) > 1:
        tune_across_sets(app, golden_paths, corpus_root, index_dir, json_out)
        return
    golden_path = golden_paths[0]
    with set_store(app, golden_path, index_dir) as store:
        golden, prepared = prepare_eval(app, store, golden_path, corpus_root)
        report = tune_retrieval(
            golden, prepared, store, app.embedder, app.settings.retrieval, folds=folds
        )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    chosen = report["chosen"]
    console.print(
        metrics_table(
            f"{report['configurations']} configurations, {folds}-fold cross-validation",
            {"cross-validated": report["cross_validated"], "chosen, full set": chosen["full_set"]},
        )
    )
    console.print(
        f"chosen: rrf_k={chosen['rrf_k']:g} fts_weight={chosen['fts_weight']:g} "
        f"dense_weight={chosen['dense_weight']:g} late_weight={chosen['late_weight']:g} "
        f"prf_weight={chosen['prf_weight']:g}"
    )
    write_report(json_out, report)


@eval_group.command(name="answers")
@goldens_option
@corpus_root_option
@index_dir_option
@json_out_option
@click.option(
    "--mode",
    type=click.Choice(ANSWER_MODES),
    default=None,
    help="Who answers, as for `ask` [default: llm when llm.base_url is set, else extractive].",
)
@click.pass_obj
def eval_answers(
    app: AppContext,
    golden_paths: tuple[Path, ...],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
    mode: str | None,
) -> None:
    """Refusals, answers, correct citations, citation precision and verified share.

    A citation is correct when its span overlaps a golden quote on the right page (for table
    evidence: when its span holds every cell of the row); on a set with capability tags the
    metrics are also shown per tag, with the share of table questions whose citations hold
    all the row's cells;
    verified_share re-checks every citation marked verified against the stored page text;
    supported_share is the share of those whose claim also passes the support checks. Several
    sets (--golden repeated, --index-dir): each set's report and the pool of their questions.
    """
    if len(golden_paths) > 1:
        answers_across_sets(app, golden_paths, corpus_root, index_dir, json_out, mode)
        return
    report = answer_set(app, golden_paths[0], corpus_root, index_dir, mode)
    print_answer_report(report)
    write_report(json_out, report)


@eval_group.command(name="refusal")
@goldens_option
@corpus_root_option
@index_dir_option
@json_out_option
@click.option(
    "--support-threshold",
    type=float,
    default=0.419,
    show_default=True,
    help="The one-threshold rule the model is compared with (before: answer at this support; "
    "the default is the shipped one, extractive.refusal's).",
)
@click.pass_obj
def eval_refusal(
    app: AppContext,
    golden_paths: tuple[Path, ...],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
    support_threshold: float,
) -> None:
    """Fit the extractive refusal model by leaving one set out (--index-dir needed).

    Every set is answered open (extractive.threshold 0), each question's refusal features are
    dumped, and the model is fitted on the other sets for each set (left out) and on all of
    them (fitted: the defaults of extractive.refusal), under the objective: false refusals + 2 x
    unanswerable answered. Per set: false refusals, unanswerable answered and the share
    answered with a correct citation, before (--support-threshold), left out and fitted.
    """
    refusal_across_sets_cli(app, golden_paths, corpus_root, index_dir, json_out, support_threshold)


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
@corpus_root_option
@json_out_option
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
        write_report(json_out, report)
        return
    if judge is not None or per_kind is not None:
        raise click.UsageError("--judge and --per-kind go with --claims")
    assert golden_path is not None
    from ..eval.claims import FAITHFUL_KINDS, evaluate_claims

    with app.store(create=True) as store:
        golden, prepared = prepare_eval(app, store, golden_path, corpus_root)
        with err_console.status("checking claims") as status:
            report = evaluate_claims(
                golden,
                prepared,
                store,
                app.embedder,
                on_question=lambda qid: status.update(styled(f"checking claims of {qid}")),
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
            styled((label, "bold")),
            str(report["faithful" if name == "faithful_supported" else "perturbations"]),
            f"{report[name]:.3f}",
            *(f"{halves[h][name]:.3f}" for h in ("a", "b")),
        )
    console.print(table)
    for item in report["quotes_not_found"]:
        console.print(styled(("quote not found", "yellow"), f" {item['id']} ({item['doc']})"))
    for qid in report["skipped"]:
        console.print(styled(("skipped", "yellow"), f" {qid}: its document is not indexed"))
    write_report(json_out, report)


@eval_group.command(name="conversations")
@golden_option
@corpus_root_option
@json_out_option
@click.option(
    "--as-written",
    is_flag=True,
    help="Ask every follow-up as written, without resolving it against the earlier turns "
    "(the baseline the resolution is measured against).",
)
@click.option(
    "--extractive-answers",
    is_flag=True,
    help="Answer extractively even with an LLM configured: the model only rewrites the "
    "follow-ups (llm.followup_rewrite), so the rewrites are measured alone.",
)
@click.pass_obj
def eval_conversations(
    app: AppContext,
    golden_path: Path,
    corpus_root: Path | None,
    json_out: Path | None,
    as_written: bool,
    extractive_answers: bool,
) -> None:
    """R@8, answers with a correct citation and refusals of follow-up questions, beside the
    first turns, on a conversation golden set (shared/golden/CONVERSATIONS.md).

    Each turn is asked with the earlier turns as history, their answers being the ones this
    run gave. Follow-ups are reported per kind (pronoun, ellipsis, comparison, drill-down,
    topic-shift, unanswerable), and topic shifts beside the same questions asked alone.
    Extractive answers resolve follow-ups without a model; with an LLM configured, its
    standalone rewrite (llm.followup_rewrite) is used and the LLM answers (with
    --extractive-answers the extractive answerer does; the report's ``rewrites`` says how
    long each rewrite took).
    """
    from ..answer import answerer_for, resolve_mode
    from ..eval.conversations import evaluate_conversations, load_conversations
    from ..llm.chain import load_stage_model

    conversations, golden = load_conversations(golden_path)
    root = corpus_root if corpus_root is not None else default_corpus_root(golden_path)
    chosen = resolve_mode(None, app.settings.llm)
    llm = app.settings.llm
    rewrites = llm.followup_rewrite and llm.base_url is not None
    model = load_stage_model(llm) if rewrites and chosen != "extractive" else None
    if extractive_answers:
        chosen = "extractive"
    with app.store(create=True) as store:
        prepared = ingest_golden_documents(app, store, golden, root)
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
                on_turn=lambda turn: status.update(styled(f"asking {turn}")),
                rewrite_timeout=llm.followup_timeout_s,
            )
    report = {**run_metadata(), "golden": str(golden_path), **report}
    _print_conversations(report)
    write_report(json_out, report)


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
