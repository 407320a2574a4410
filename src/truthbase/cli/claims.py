"""`verify-claim`: does a quote on a page support a claim? The use case is
:meth:`truthbase.app.Service.verify_claim`, the same as the MCP tool's and the Python API's."""

from __future__ import annotations

import json
import sys

import click

from .common import AppContext, console, styled


@click.command(name="verify-claim")
@click.option("--doc", "doc_id", required=True, metavar="ID", help="Document id or unique prefix.")
@click.option(
    "--page",
    type=int,
    default=None,
    help="PDF page, 1-based (the `page` of search and ask output).",
)
@click.option(
    "--unit",
    type=int,
    default=None,
    help="Unit index, 0-based (the `unit` of ask --json): a PDF page or an EPUB section.",
)
@click.option("--quote", required=True, help="The passage, as on the page.")
@click.option("--claim", required=True, help="The sentence the quote is cited for.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict object as JSON.")
@click.option(
    "--judge",
    type=click.Choice(["off", "auto", "llm"]),
    default=None,
    help="The model judge after the deterministic checks [default: the setting support.judge].",
)
@click.pass_obj
def verify_claim_command(
    app: AppContext,
    doc_id: str,
    page: int | None,
    unit: int | None,
    quote: str,
    claim: str,
    as_json: bool,
    judge: str | None,
) -> None:
    """Check that QUOTE is on the page and supports CLAIM (numbers, negation, named terms,
    coverage and the embedder's similarity agree; then the model judge, when support.judge or
    --judge asks for it).

    Exit 0 when supported; 1 when the quote is on the page but does not support the claim
    (quote_only) or is not on the page (unverified), each reason on its own line; 2 for bad
    input (an unknown document, a page out of range, an empty quote or claim).
    """
    with app.service() as service:
        verdict = service.verify_claim(doc_id, quote, claim, page=page, unit=unit, judge=judge)
    if as_json:
        click.echo(json.dumps(verdict.to_json(), indent=2))
    else:
        colour = {"supported": "green", "quote_only": "yellow", "unverified": "red"}[verdict.state]
        where = (
            f"unit {verdict.unit} (page {verdict.page}) chars {verdict.start}-{verdict.end}"
            if verdict.found
            else f"unit {verdict.unit} (page {verdict.page})"
        )
        score = f", score {verdict.check.score:.2f}" if verdict.check is not None else ""
        console.print(styled((verdict.state, colour), f": {where}{score}"), highlight=False)
        for reason in verdict.reasons:
            console.print(f"  {reason}", highlight=False)
    if verdict.state != "supported":
        sys.exit(1)
