"""`ask` and `verify`: answers with verified citations, and the audit of the stored ones."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..records import CHAT_MODES
from .collections import COLLECTION_OPTION, DOC_OPTION
from .common import AppContext, console, err_console, snippet, styled

if TYPE_CHECKING:
    from ..answer import Answer
    from ..turns import Turn


@click.command(name="ask")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the final answer object as JSON.")
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 30),
    default=None,
    help="Sources of the answer pipeline [default: retrieval.k].",
)
@click.option(
    "--mode",
    type=click.Choice(CHAT_MODES),
    default=None,
    help="Who answers: the configured LLM chain (extractive last), the extractive answerer, "
    "or the agent (the book tools first; the extractive agent without an LLM) "
    "[default, auto: llm when llm.base_url is set, else extractive].",
)
@DOC_OPTION
@COLLECTION_OPTION
@click.option(
    "--history",
    "history_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A JSON file with the earlier turns of the thread this question follows, oldest "
    "first: a list of {question, answer, citations} (the `turn` of each earlier "
    "`ask --json`, or the `history` of POST /api/chat). The question is resolved against "
    "them first and the answer says what was searched.",
)
@click.pass_obj
def ask_command(
    app: AppContext,
    question: str,
    as_json: bool,
    k: int | None,
    mode: str | None,
    doc_ids: tuple[str, ...],
    collection: str | None,
    history_file: Path | None,
) -> None:
    """Answer QUESTION from the index with [n] citations, each verified against its page.

    Without an LLM configured the extractive answerer answers: verbatim sentences of the
    sources, or NO_ANSWER when the support is too weak. With one (TRUTHBASE_LLM__BASE_URL), the
    models of the chain answer in turn on errors and timeouts, the extractive answerer last; the
    optional rewrite and rerank stages fail open. `--mode agent` lets the model call the book
    tools (segment summaries, related passages) before it answers with position tags; without
    an LLM, or when the model fails, the extractive agent answers from the same tools. Every
    answer is stored for `truthbase verify`.

    A follow-up: `--history` names the thread's earlier turns (one JSON file, the same shape
    as the chat API's `history`, so a thread of any length is one file); `--json` prints the
    answer's own `turn` to append to it.
    """
    from ..answer import AnswerError, DoneEvent, ErrorEvent, TokenEvent
    from ..app import Service

    history = _read_history(history_file) if history_file is not None else []
    done: DoneEvent | None = None
    with app.store() as store:
        service = Service(store, app.settings, lambda: app.embedder)
        events = service.ask(
            question, mode=mode, k=k, documents=doc_ids, collection=collection, history=history
        )
        for event in events:
            if isinstance(event, ErrorEvent):
                raise AnswerError(event.message, event.stage)
            elif isinstance(event, TokenEvent) and not as_json:
                click.echo(event.text, nl=False)
            elif isinstance(event, DoneEvent):
                done = event  # its answer is recorded by the service
        kinds = {d.id: d.kind for d in store.list_documents()}
    if done is None:
        raise AnswerError("the answer stream ended without an answer", "answer")
    final, resolution = done.answer, done.resolution
    searched = resolution.searched_for if resolution is not None else None
    if as_json:
        data = final.to_json()
        if resolution is not None:
            data["searched_for"], data["resolution"] = searched, resolution.to_json()
        data["turn"] = final.as_turn(question, searched).to_json()
        click.echo(json.dumps(data, indent=2))
        return
    click.echo()  # ends the streamed answer's last line
    if resolution is not None and resolution.changed:
        err_console.print(styled((f"searched for: {searched}", "dim")))
    _print_answer(final, kinds)


def _read_history(path: Path) -> list[Turn]:
    """The earlier turns in ``path`` (a JSON list of turns); a usage error names what is wrong."""
    from ..errors import InvalidInput
    from ..turns import turns_from_json

    try:
        return turns_from_json(json.loads(path.read_text(encoding="utf-8")))
    except RecursionError:
        raise click.BadParameter("the history nests too deeply to be turns") from None
    except (OSError, ValueError, InvalidInput) as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--history") from exc


def _print_answer(final: Answer, kinds: Mapping[str, str]) -> None:
    """The sources, citations, problems and timings of an answer whose text was streamed."""
    cited = {c.n for c in final.citations}
    if final.outcome == "weak":
        from ..answer.slots import SLOT_NAMES  # the answer package loads the embedder's code

        slot = SLOT_NAMES.get(str(final.info.get("unfilled_slot")))
        said = (
            f"The documents may not answer this: none of the closest passages gives {slot}. "
            "They are listed (no claim is made):"
            if slot
            else "The documents may not answer this; the closest passages (no claim is made):"
        )
        console.print(styled((said, "yellow")))
    console.print(styled("\n", ("sources", "bold")))
    # Agent mode's tools may show hundreds of passages: then only the cited ones are listed.
    shown = (
        final.sources if len(final.sources) <= 12 else [s for s in final.sources if s.n in cited]
    )
    for s in shown:
        mark = "*" if s.n in cited else " "
        place = _place(kinds.get(s.doc_id), s.page)
        console.print(f"{mark}[{s.n}] {s.title}, {place}: {snippet(s.text, 140)}")
    if len(shown) < len(final.sources):
        console.print(
            styled((f"({len(final.sources) - len(shown)} more sources, not cited)", "dim"))
        )
    if final.citations:
        console.print(styled("\n", ("citations", "bold")))
    for c in final.citations:
        badge = _STATES.get(c.state, (c.state, ""))
        why = f" ({'; '.join(c.reasons)})" if c.reasons else ""
        console.print(
            styled(
                f"[{c.n}] {_place(kinds.get(c.doc_id), c.page)} chars {c.start}-{c.end} ",
                badge,
                f"{why}: {snippet(c.quote, 160)}",
            )
        )
    for problem in final.problems:
        err_console.print(styled(("dropped", "yellow"), f" {problem}"))
    for failure in final.info.get("failed", []):
        err_console.print(
            styled(("model failed", "yellow"), f" {failure['model']}: {failure['error']}")
        )
    for tool in final.info.get("tools", []):
        state = f"error: {tool['error']}" if tool["error"] else f"{len(tool['sources'])} sources"
        forced = " (not asked for by a model: book first)" if tool["forced"] else ""
        console.print(styled((f"tool {tool['name']}{forced}: {state}", "dim")))
    if final.info.get("fallback_reason"):
        console.print(styled((f"{final.answerer}: {final.info['fallback_reason']}", "dim")))
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in final.timings.items())
    stored = f"; stored as answer {final.id}" if final.id is not None else ""
    console.print(styled("\n", (f"answered by {final.answerer}; {timings}{stored}", "dim")))


#: How ``ask`` shows a citation's state: only ``supported`` gets the check mark.
_STATES = {
    "supported": ("✓ supported", "green"),
    "quote_only": ("quote only: check this passage", "yellow"),
    "unverified": ("unverified", "red"),
}


def _place(kind: str | None, page: int) -> str:
    """Where a span is, as a reader would say it: a PDF page or an EPUB section (1-based)."""
    return f"section {page}" if kind == "epub" else f"p. {page}"


@click.command(name="verify")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Re-check an exported report (`truthbase export`: the HTML report or the Markdown) "
    "instead of the stored answers.",
)
@click.pass_obj
def verify_command(app: AppContext, as_json: bool, report_file: Path | None) -> None:
    """Re-check every stored answer's verified citations against the stored documents.

    Each citation that was shown as verified must still have its quote in the stored page text
    at its span, under the one matcher of every answer. Exits 1 with the list of failures
    (answer id, citation n, document, page, why), 0 with the count of citations checked.
    With --report FILE, the citations of that exported report are re-checked instead (a
    document no longer in the index is a failure there): exit 0 when all hold, 1 with the list
    of those that no longer hold, 2 for a file that is not a readable report.
    """
    from ..cite import verify_answers

    if report_file is not None:
        from .exports import verify_report_file

        verify_report_file(app, report_file, as_json)
        return

    with app.store() as store:
        known = {d.id for d in store.list_documents()}
        report = verify_answers(store.answers(), store, known)
    if as_json:
        click.echo(json.dumps({"ok": report.ok, **report.to_json()}, indent=2))
    else:
        for f in report.failures:
            click.echo(
                f"FAIL answer {f.answer_id} citation [{f.n}] doc {f.doc_id[:12]} "
                f"page {f.page}: {f.why}"
            )
        for d in report.deleted:
            click.echo(
                f"DELETED answer {d.answer_id} citation [{d.n}] doc {d.doc_id[:12]}: "
                "document deleted"
            )
        summary = (
            f"{report.answers} answers, {report.verified_citations} verified citations "
            f"re-checked, {report.unverified_citations} shown as unverified"
        )
        if report.deleted:
            summary += f", {len(report.deleted)} of deleted documents (not failures)"
        if report.ok:
            click.echo(f"OK: {summary}; all verified citations are on their pages")
        else:
            click.echo(f"{len(report.failures)} failures: {summary}")
    if not report.ok:
        sys.exit(1)
