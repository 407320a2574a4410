"""`eval retrieval`, `eval tune` and `eval answers` on several golden sets at once: each set in
its own index (built once in --index-dir, reused after), each set's numbers and the pool; `eval
tune` chooses by leaving one set out (:mod:`truthbase.eval.across_sets`), and so does `eval
refusal` for the refusal model (:mod:`truthbase.eval.refusal`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..config import ExtractiveSettings
from ..eval.across_sets import ScoredSet, leave_one_set_out, pool_means, set_names
from ..eval.metrics import METRIC_NAMES
from ..eval.retrieval import evaluate_retrieval, score_grid
from .common import AppContext, console, err_console, run_metadata, styled
from .eval_common import (
    metrics_table,
    prepare_eval,
    print_answer_report,
    set_store,
    write_report,
)


def _named_sets(golden_paths: Sequence[Path], index_dir: Path | None) -> list[tuple[str, Path]]:
    """Each set's name (its file stem) with its path; several sets need --index-dir, since
    measuring them in one index would make each set's documents the others' distractors."""
    if index_dir is None:
        raise click.UsageError(
            "several golden sets are measured each in its own index: give --index-dir DIR "
            "(built on the first run, reused after)"
        )
    names = set_names([path.stem for path in golden_paths])
    return list(zip(names, golden_paths, strict=True))


def retrieval_across_sets(
    app: AppContext,
    golden_paths: Sequence[Path],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
) -> None:
    """Each set's retrieval report, then the pool of all their questions, per mode."""
    reports: dict[str, dict[str, Any]] = {}
    for name, path in _named_sets(golden_paths, index_dir):
        err_console.print(styled((name, "bold"), f" ({path})"))
        with set_store(app, path, index_dir) as store:
            golden, prepared = prepare_eval(app, store, path, corpus_root)
            reports[name] = {
                "golden": str(path),
                **evaluate_retrieval(golden, prepared, store, app.embedder, app.settings.retrieval),
            }
    sizes = {name: int(report["questions"]) for name, report in reports.items()}
    pool = {
        mode: pool_means({name: r["modes"][mode] for name, r in reports.items()}, sizes)
        for mode in next(iter(reports.values()))["modes"]
    }
    console.print(
        metrics_table(
            "hybrid retrieval per set",
            {f"{name} ({sizes[name]})": r["modes"]["hybrid"] for name, r in reports.items()},
        )
    )
    console.print(metrics_table(f"the pool ({sum(sizes.values())} questions)", pool))
    write_report(json_out, {**run_metadata(), "sets": reports, "pool": pool})


def tune_across_sets(
    app: AppContext,
    golden_paths: Sequence[Path],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
) -> None:
    """The fusion grid chosen by leave-one-set-out cross-validation: per set, the left-out
    numbers beside the fitted ones."""
    scored: list[ScoredSet] = []
    for name, path in _named_sets(golden_paths, index_dir):
        err_console.print(styled((name, "bold"), f" ({path})"))
        with set_store(app, path, index_dir) as store:
            golden, prepared = prepare_eval(app, store, path, corpus_root)
            with err_console.status(styled(f"scoring the grid on {name}")):
                grid = score_grid(golden, prepared, store, app.embedder, app.settings.retrieval)
            scored.append(ScoredSet(name, grid))
    report = leave_one_set_out(scored, app.settings.retrieval)
    table = Table(title=f"{report['configurations']} configurations, leaving one set out")
    table.add_column("set")
    table.add_column("numbers")
    for name in METRIC_NAMES:
        table.add_column(name, justify="right")
    rows = [*report["sets"].items(), ("pool", report["pool"])]
    for name, row in rows:
        for which in ("left_out", "fitted"):
            table.add_row(
                f"{name} ({row['questions']})" if which == "left_out" else "",
                which.replace("_", " "),
                *(f"{row[which][metric]:.3f}" for metric in METRIC_NAMES),
            )
    console.print(table)
    chosen = report["chosen"]
    console.print(
        "chosen on all the sets: " + " ".join(f"{key}={value:g}" for key, value in chosen.items())
    )
    for name, row in report["sets"].items():
        without = row["chosen_without_it"]
        console.print(
            f"chosen without {name}: " + " ".join(f"{k}={v:g}" for k, v in without.items())
        )
    write_report(
        json_out,
        {**run_metadata(), "golden": [str(p) for p in golden_paths], **report},
    )


def answer_set(
    app: AppContext,
    golden_path: Path,
    corpus_root: Path | None,
    index_dir: Path | None,
    mode: str | None,
    extractive: ExtractiveSettings | None = None,
) -> dict[str, Any]:
    """One set's answer report (``eval answers``), in its index (``extractive``: in place of
    the settings' section)."""
    from ..answer import answerer_for, resolve_mode
    from ..eval.answers import evaluate_answers

    chosen = resolve_mode(mode, app.settings.llm)
    with set_store(app, golden_path, index_dir) as store:
        golden, prepared = prepare_eval(app, store, golden_path, corpus_root)
        with err_console.status("answering") as status:
            report = evaluate_answers(
                golden,
                prepared,
                store,
                app.embedder,
                app.settings.retrieval,
                answerer=answerer_for(
                    app.settings.llm, extractive or app.settings.extractive, app.embedder, chosen
                ),
                on_question=lambda qid: status.update(styled(f"answering {qid}")),
            )
    return {**run_metadata(), "golden": str(golden_path), **report}


def answers_across_sets(
    app: AppContext,
    golden_paths: Sequence[Path],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
    mode: str | None,
) -> None:
    """Each set's answer report, then the answer metrics of all their questions pooled."""
    from ..eval.answers import summarize

    reports: dict[str, dict[str, Any]] = {}
    for name, path in _named_sets(golden_paths, index_dir):
        err_console.print(styled((name, "bold"), f" ({path})"))
        reports[name] = answer_set(app, path, corpus_root, index_dir, mode)
        print_answer_report(reports[name])
    records = [record for report in reports.values() for record in report["per_question"]]
    pool = {"questions": len(records), **summarize(records)}
    table = Table(title=f"answers, the pool ({len(records)} questions)")
    table.add_column("metric")
    table.add_column("pool", justify="right")
    for name in reports:
        table.add_column(name, justify="right")
    for metric in (
        "unanswerable_refused",
        "answered",
        "answered_with_correct_citation",
        "citation_precision",
        "false_refusals",
        "supported_share",
    ):
        table.add_row(metric, *(_cell(row[metric]) for row in (pool, *reports.values())))
    console.print(table)
    write_report(
        json_out,
        {**run_metadata(), "sets": reports, "pool": pool},
    )


def refusal_across_sets_cli(
    app: AppContext,
    golden_paths: Sequence[Path],
    corpus_root: Path | None,
    index_dir: Path | None,
    json_out: Path | None,
    support_threshold: float,
) -> None:
    """``eval refusal``: each set answered open (``extractive.threshold`` 0: every question
    the hard rules let through is answered), its per-question features dumped, and the refusal
    model fitted by leaving one set out (:func:`truthbase.eval.refusal.refusal_across_sets`)."""
    from ..eval.refusal import items_of, refusal_across_sets

    open_settings = app.settings.extractive.model_copy(update={"threshold": 0.0})
    items = []
    for name, path in _named_sets(golden_paths, index_dir):
        err_console.print(styled((name, "bold"), f" ({path}), answered open"))
        report = answer_set(app, path, corpus_root, index_dir, "extractive", open_settings)
        items.extend(items_of(name, report["per_question"]))
    result = refusal_across_sets(items, support_threshold)
    table = Table(title=f"refusal ({result['objective']})")
    for column in ("set", "numbers", "false refusals", "unanswerable answered", "correct cit."):
        table.add_column(column, justify="left" if column in ("set", "numbers") else "right")
    for name, row in result["sets"].items():
        for numbers in ("before", "before_left_out", "left_out", "fitted"):
            counts = row[numbers]
            table.add_row(
                name,
                numbers,
                f"{counts['false_refusals']} of {counts['answerable']}",
                f"{counts['unanswerable_answered']} of {counts['unanswerable']}",
                f"{counts['answered_with_correct_citation']:.3f}",
            )
    console.print(table)
    console.print(
        f"fitted (l2={result['l2']:g}): "
        + " ".join(f"{k}={v:g}" for k, v in result["fitted_model"].items())
    )
    per_question = [
        {
            "set": i.set_name,
            "id": i.id,
            "answerable": i.answerable,
            "eligible": i.eligible,
            "correct": i.correct,
            "features": dict(zip(result["features"], i.features, strict=True)),
        }
        for i in items
    ]
    write_report(
        json_out,
        {
            **run_metadata(),
            "golden": [str(p) for p in golden_paths],
            **result,
            "per_question": per_question,
        },
    )


def _cell(value: Any) -> str:
    return str(value) if isinstance(value, int) else f"{value:.3f}"
