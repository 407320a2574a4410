"""`ask` and `verify`: answers with verified citations, and the audit of the stored ones."""

from __future__ import annotations

import json
import sys

import click

from ..embed import EmbedderMismatchError, EmbeddingError
from ..store import StoreError
from .common import AppContext, console, err_console, fail, snippet


@click.command(name="ask")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the final answer object as JSON.")
@click.option("--k", "k", type=click.IntRange(1, 30), default=8, show_default=True, help="Sources.")
@click.option(
    "--mode",
    type=click.Choice(["extractive", "llm"]),
    default=None,
    help="Who answers: the configured LLM chain (extractive last) or the extractive answerer "
    "[default: llm when llm.base_url is set, else extractive].",
)
@click.pass_obj
def ask_command(app: AppContext, question: str, as_json: bool, k: int, mode: str | None) -> None:
    """Answer QUESTION from the index with [n] citations, each verified against its page.

    Without an LLM configured the extractive answerer answers: verbatim sentences of the
    sources, or NO_ANSWER when the support is too weak. With one (TRUTHBASE_LLM__BASE_URL), the
    models of the chain answer in turn on errors and timeouts, the extractive answerer last; the
    optional rewrite and rerank stages fail open. Every answer is stored for `truthbase verify`.
    """
    from ..answer import (
        Answer,
        CitationsEvent,
        DoneEvent,
        ErrorEvent,
        LLMNotConfigured,
        SourcesEvent,
        TokenEvent,
        answerer_for,
        record_answer,
        resolve_mode,
        stages_for,
    )
    from ..answer import answer_question as run_answer

    llm = app.settings.llm
    try:
        chosen = resolve_mode(mode, llm)
    except LLMNotConfigured as exc:
        fail(str(exc))
    final: Answer | None = None
    try:
        with app.store() as store:
            answerer = answerer_for(llm, app.embedder, chosen)
            events = run_answer(
                store,
                app.embedder,
                question,
                app.settings.retrieval,
                answerer=answerer,
                k=k,
                stages=stages_for(llm, chosen),
            )
            for event in events:
                if isinstance(event, ErrorEvent):
                    fail(f"{event.stage}: {event.message}")
                elif isinstance(event, TokenEvent) and not as_json:
                    click.echo(event.text, nl=False)
                elif isinstance(event, SourcesEvent | CitationsEvent):
                    pass
                elif isinstance(event, DoneEvent):
                    final = event.answer
                    record_answer(store, final)
    except (StoreError, EmbedderMismatchError, EmbeddingError, ValueError) as exc:
        fail(str(exc))
    if final is None:
        fail("the answer stream ended without an answer")
    if as_json:
        click.echo(json.dumps(final.to_json(), indent=2))
        return
    click.echo()
    cited = {c.n for c in final.citations}
    console.print("\n[bold]sources[/]")
    for s in final.sources:
        mark = "*" if s.n in cited else " "
        console.print(f"{mark}[{s.n}] {s.title}, p. {s.page}: {snippet(s.text, 140)}")
    if final.citations:
        console.print("\n[bold]citations[/]")
    for c in final.citations:
        state = "[green]✓ verified[/]" if c.verified else "[red]unverified[/]"
        console.print(
            f"[{c.n}] p. {c.page} chars {c.start}-{c.end} {state}: {snippet(c.quote, 160)}"
        )
    for problem in final.problems:
        err_console.print(f"[yellow]dropped[/] {problem}")
    for failure in final.info.get("failed", []):
        err_console.print(f"[yellow]model failed[/] {failure['model']}: {failure['error']}")
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in final.timings.items())
    stored = f"; stored as answer {final.id}" if final.id is not None else ""
    console.print(f"\n[dim]answered by {final.answerer}; {timings}{stored}[/]")


@click.command(name="verify")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def verify_command(app: AppContext, as_json: bool) -> None:
    """Re-check every stored answer's verified citations against the stored documents.

    Each citation that was shown as verified must still have its quote in the stored page text
    at its span, under the one matcher of every answer. Exits 1 with the list of failures
    (answer id, citation n, document, page, why), 0 with the count of citations checked.
    """
    from ..cite import verify_answers
    from ..store.base import AnswerLog

    try:
        with app.store() as store:
            if not isinstance(store, AnswerLog):
                fail("this store keeps no answers (only the SQLite store does so far)")
            report = verify_answers(store.answers(), store)
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps({"ok": report.ok, **report.to_json()}, indent=2))
    else:
        for f in report.failures:
            click.echo(
                f"FAIL answer {f.answer_id} citation [{f.n}] doc {f.doc_id[:12]} "
                f"page {f.page}: {f.why}"
            )
        summary = (
            f"{report.answers} answers, {report.verified_citations} verified citations "
            f"re-checked, {report.unverified_citations} shown as unverified"
        )
        if report.ok:
            click.echo(f"OK: {summary}; all verified citations are on their pages")
        else:
            click.echo(f"{len(report.failures)} failures: {summary}")
    if not report.ok:
        sys.exit(1)
