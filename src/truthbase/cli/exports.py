"""`export`: stored answers as Markdown or an HTML evidence report; and `verify --report`, the
re-check of such a report. The use cases are :meth:`truthbase.app.Service.export_answers` and
:meth:`~truthbase.app.Service.verify_report`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import InvalidInput
from .common import AppContext, write_text_file

__all__ = ["export_command", "verify_report_file"]


@click.command(name="export")
@click.option(
    "--answer",
    "answer_ids",
    type=click.IntRange(1),
    multiple=True,
    help="A stored answer's id (`ask --json` prints it); repeat it for several, in order.",
)
@click.option(
    "--thread",
    "thread_id",
    default=None,
    help="A saved thread's id (the chat page's, without accounts): all its answers, in order.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    default="html",
    show_default=True,
    help="md: Markdown, a footnote per citation; html: one self-contained evidence report.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The file to write.",
)
@click.option(
    "--base-url",
    default=None,
    help="The web app the citations link to [default: server.base_url, else "
    "http://server.host:server.port].",
)
@click.pass_obj
def export_command(
    app: AppContext,
    answer_ids: tuple[int, ...],
    thread_id: str | None,
    fmt: str,
    out: Path,
    base_url: str | None,
) -> None:
    """Export stored answers with the evidence of every citation.

    Markdown: each citation a footnote with its quote, document, printed and physical page,
    state, span, the document's sha256 and a link that opens the highlight. HTML: one file that
    opens offline with no script, each citation's region of the page rendered with its highlight
    (PDF) or its passage in context (EPUB), and the evidence that `truthbase verify --report`
    re-checks. Exit 2 for an unknown answer or thread.
    """
    if bool(answer_ids) == (thread_id is not None):
        raise click.UsageError("give --answer ID (one or more) or --thread ID")
    with app.service() as service:
        exported = (
            service.export_thread(thread_id, fmt, base_url=base_url)
            if thread_id is not None
            else service.export_answers(list(answer_ids), fmt, base_url=base_url)
        )
    write_text_file(out, exported.content)
    click.echo(f"wrote {out} ({len(exported.content.encode('utf-8'))} bytes)")


def verify_report_file(app: AppContext, report: Path, as_json: bool) -> None:
    """`verify --report FILE`: exit 0 when every citation of the report still holds, 1 with the
    list of those that do not, 2 for a file that is not a readable report."""
    try:
        text = report.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read the report {report}: {exc}") from exc
    with app.service() as service:
        check = service.verify_report(text)
    if as_json:
        click.echo(json.dumps(check.to_json(), indent=2))
    else:
        for p in check.problems:
            page = f" page {p.page}" if p.page is not None else ""
            click.echo(
                f"NO LONGER HOLDS answer {p.answer_id} citation [{p.n}] "
                f"doc {p.doc_id[:12]}{page}: {p.why}"
            )
        summary = (
            f"{check.answers} answers, {check.checked} citations re-checked, "
            f"{check.unverified} shown as unverified"
        )
        if check.ok:
            click.echo(f"OK: {summary}; every cited passage still holds")
        else:
            click.echo(f"{len(check.problems)} no longer hold: {summary}")
    if not check.ok:
        sys.exit(1)
