"""`feedback`: the reports users gave on answers, and a draft golden set made from them."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from ..app.feedback import needs_evidence_path
from .common import AppContext, console, write_text_file


@click.group("feedback")
def feedback_group() -> None:
    """Thumbs up or down on answers and reports on their citations, from the chat page."""


@feedback_group.command("list")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="How many of the latest reports.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def feedback_list(app: AppContext, limit: int, as_json: bool) -> None:
    """The latest reports, newest first (the operator sees everyone's)."""
    with app.service() as service:
        reports = service.feedback_reports(limit)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in reports], ensure_ascii=False))
        return
    table = Table("when", "user", "answer", "[n]", "kind", "question", "comment")
    for r in reports:
        cited = str(r.citation) if r.citation else ""
        user = r.user or "(local)"
        table.add_row(r.created_at, user, str(r.answer_id), cited, r.kind, r.question, r.comment)
    console.print(table)
    console.print(f"{len(reports)} reports", highlight=False)


@feedback_group.command("export")
@click.option(
    "--golden",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The draft golden file to write; questions that need evidence found by a person go "
    "to NAME.needs_evidence.json beside it.",
)
@click.pass_obj
def feedback_export(app: AppContext, out: Path) -> None:
    """Write the reported questions as a draft golden set, for a person to review: up-voted
    answers' citations as evidence (less those reported as the wrong passage), tags
    ``feedback`` and ``review`` (with the reason) where a report asks a person to look."""
    with app.service() as service:
        draft = service.feedback_golden()
    write_text_file(out, json.dumps(draft.golden, indent=2, ensure_ascii=False) + "\n")
    needs = needs_evidence_path(out)
    write_text_file(needs, json.dumps(draft.needs_evidence, indent=2, ensure_ascii=False) + "\n")
    console.print(
        f"{len(draft.golden['questions'])} questions to {out}; "
        f"{len(draft.needs_evidence)} that need evidence to {needs}",
        highlight=False,
    )
