"""`docs` and `search`: looking into the index (and completing older indexes' token signs)."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..config import DEFAULT_K
from ..errors import InvalidInput
from ..ingest.backfill import backfill_token_signs
from ..records import SearchHit
from ..retrieve.hybrid import MODES, search
from .collections import COLLECTION_OPTION, DOC_OPTION
from .common import AppContext, console, err_console, snippet, styled


def add_token_signs(app: AppContext) -> None:
    """`docs --add-token-signs`: the backfill (:mod:`truthbase.ingest.backfill`) with a
    progress bar."""
    with app.store() as store:
        progress = Progress(
            TextColumn("[bold]token signs"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        )
        task_ids: list[Any] = []

        def on_progress(done: int, total: int) -> None:
            if not task_ids:
                task_ids.append(progress.add_task("", total=total))
            progress.update(task_ids[0], completed=done)

        with progress:
            report = backfill_token_signs(
                store, app.embedder, app.settings.chunking, on_progress=on_progress
            )
    if report.skipped_reason is not None:
        raise InvalidInput(
            f"cannot add token signs to {report.missing} chunks: {report.skipped_reason}"
        )
    console.print(f"added token signs to {report.added} chunks")
    if report.added < report.missing:
        console.print(
            f"{report.missing - report.added} chunks got none (no word pieces, or deleted "
            "meanwhile)",
            soft_wrap=True,
        )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--add-token-signs",
    "backfill",
    is_flag=True,
    help="Embed the chunks that have no token signs (ingested before schema 6) and store "
    "their signs, so that late interaction ranks them too. Resumable.",
)
@click.pass_obj
def docs(app: AppContext, as_json: bool, backfill: bool) -> None:
    """List the ingested documents (or, with --add-token-signs, complete their token signs)."""
    if backfill:
        add_token_signs(app)
        return
    with app.store() as store:
        documents = store.list_documents()
        counts = store.counts() if documents and not as_json else {}
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": d.id,
                        "title": d.title,
                        "path": d.path,
                        "kind": d.kind,
                        "language": d.language,
                        "pages": d.unit_count,
                        "chunks": d.chunk_count,
                        "ingested_at": d.ingested_at,
                    }
                    for d in documents
                ],
                indent=2,
            )
        )
        return
    if not documents:
        console.print("No documents yet: run `truthbase ingest PATH`.")
        return
    table = Table(title=f"{len(documents)} documents in {app.settings.db}")
    for column in ("id", "title", "kind", "language", "pages", "chunks", "path"):
        table.add_column(column, overflow="fold")
    for d in documents:
        table.add_row(
            d.id[:12],
            d.title,
            d.kind,
            d.language or "-",
            str(d.unit_count),
            str(d.chunk_count),
            d.path,
        )
    console.print(table)
    without = counts.get("chunks", 0) - counts.get("token_chunks", 0)
    if without > 0:
        console.print(
            f"{without} of {counts['chunks']} chunks have no token signs (ingested before "
            "schema 6, or with chunking.token_signs off): late interaction skips them; run "
            "`truthbase docs --add-token-signs`",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )


def _hit_json(hit: SearchHit, rank: int) -> dict[str, Any]:
    c = hit.chunk
    return {
        "rank": rank,
        "score": hit.score,
        "doc_id": c.doc_id,
        "document": hit.document_title,
        "page": c.unit + 1,
        "chunk_id": c.id,
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "rects": [list(r) for r in c.rects],
        "kind": c.kind,
        "context": c.context,
        "section": c.section,
        "arms": {
            arm: {"rank": hit.arm_ranks[arm], "score": hit.arm_scores.get(arm)}
            for arm in hit.arm_ranks
        },
    }


def _document_cell(hit: SearchHit) -> Text:
    """The document's title and, under it, the hit's section path (when it has one)."""
    if not hit.chunk.section:
        return styled(hit.document_title)
    return styled(hit.document_title, "\n", (hit.chunk.section, "dim"))


@click.command(name="search")
@click.argument("query")
@click.option(
    "--k", "k", type=click.IntRange(1, 100), default=None, help=f"Results [default {DEFAULT_K}]."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON with text and rects.")
@click.option("--explain", is_flag=True, help="Show each arm's rank and score per result.")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="hybrid",
    show_default=True,
    help="Fuse both arms, or use one alone.",
)
@DOC_OPTION
@COLLECTION_OPTION
@click.pass_obj
def search_command(
    app: AppContext,
    query: str,
    k: int | None,
    as_json: bool,
    explain: bool,
    mode: str,
    doc_ids: tuple[str, ...],
    collection: str | None,
) -> None:
    """Rank passages for QUERY (full text + dense vectors, fused); `--doc` and `--collection`
    keep it to those documents."""
    with app.service() as service:
        result = search(
            service.store,
            app.embedder,
            query,
            app.settings.retrieval,
            k=k,
            mode=mode,  # type: ignore[arg-type]
            doc_ids=service.scope(documents=doc_ids, collection=collection),
        )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "query": query,
                    "fts_query": result.fts_query,
                    "results": [_hit_json(h, i) for i, h in enumerate(result.hits, 1)],
                },
                indent=2,
            )
        )
        return
    if not result.hits:
        console.print("No results. Is anything ingested? (`truthbase docs`)")
        return
    table = Table(title=f"{query!r}: {len(result.hits)} results ({mode})", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("document")
    table.add_column("page", justify="right")
    table.add_column("score", justify="right")
    table.add_column("kind")
    # Every ranked list that fed the fusion: fts, dense, and prf (pseudo-relevance feedback) or
    # per-sub-query lists when those are on, in the order they first appear.
    arms = list(dict.fromkeys(arm for hit in result.hits for arm in hit.arm_ranks))
    if explain:
        table.caption = "arm columns: the result's rank/score in that ranked list (- : not in it)"
        for arm in arms:
            table.add_column(arm, justify="right")
    # The arm columns come first: on a narrow terminal the snippet is what gets cut.
    table.add_column("snippet", overflow="fold", min_width=20 if explain else None)
    for i, hit in enumerate(result.hits, 1):
        row: list[str | Text] = [
            str(i),
            _document_cell(hit),
            str(hit.chunk.unit + 1),
            f"{hit.score:.4f}",
            hit.chunk.kind,
        ]
        if explain:
            for arm in arms:
                if arm in hit.arm_ranks:
                    row.append(f"{hit.arm_ranks[arm]}/{hit.arm_scores.get(arm, 0.0):.3g}")
                else:
                    row.append("-")
        row.append(snippet(hit.chunk.text, 120) if explain else snippet(hit.chunk.text))
        table.add_row(*row)
    console.print(table)
