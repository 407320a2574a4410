"""`threads`: the saved threads of the command line's user, listed, searched, opened (every
citation checked again against the index), renamed and deleted. The use cases and their rules
are :mod:`truthbase.app.threads` (through :class:`truthbase.app.Service`); this only prints.

The command line's user is the operator, as for `export --thread` and `feedback`: its threads
are the local user's (those the chat page keeps on a server without accounts), never a
signed-in user's.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from ..app.threads import OpenedThread
from .common import AppContext, console, snippet

__all__ = ["threads_group"]

_ID = click.argument("thread_id", metavar="ID")


@click.group("threads")
def threads_group() -> None:
    """Saved threads (conversations kept with their evidence): list, show, rename, delete.

    They are the command line's user's: the local user's, whose threads the chat page keeps on
    a server without accounts (`ask` in the chat page, or the MCP `ask` tool with new_thread).
    An unknown ID exits 2.
    """


@threads_group.command("list")
@click.option(
    "--search",
    "words",
    default=None,
    metavar="WORDS",
    help="Only threads whose questions or answers hold, for every one of these words, a word "
    "that begins with it (embed finds embedded; case-folded; at most 10).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def threads_list(app: AppContext, words: str | None, as_json: bool) -> None:
    """The threads, newest first: id, title, turns, last update."""
    with app.service() as service:
        found = service.threads(words)
    if as_json:
        click.echo(json.dumps({"threads": [t.to_json() for t in found]}, ensure_ascii=False))
        return
    table = Table(title=f"{len(found)} threads")
    table.add_column("id", no_wrap=True, min_width=32)  # whole: `show ID` takes it
    table.add_column("title")
    table.add_column("turns", justify="right")
    table.add_column("updated", no_wrap=True)
    for t in found:
        table.add_row(t.id, snippet(t.title, 80), str(t.turns), t.updated_at[:16])
    console.print(table)


def _citation_line(citation: Any) -> str:
    if not isinstance(citation, dict):
        return "  [?] (unreadable citation)"
    recheck = citation.get("recheck") or {}
    state, reason = recheck.get("state", "?"), recheck.get("reason", "")
    unit = citation.get("unit")
    page = f" page {unit + 1}" if isinstance(unit, int) and not isinstance(unit, bool) else ""
    doc = str(citation.get("doc_id", ""))[:12]
    quote = snippet(str(citation.get("quote", "")), 160)
    line = f"  [{citation.get('n', '?')}] {state.upper()} doc {doc}{page}"
    line += f": {reason}" if reason else ""
    return line + (f"\n      “{quote}”" if quote else "")


def _print_thread(opened: OpenedThread) -> None:
    info = opened.info
    click.echo(f"{info.title}\n{info.id} · {info.turns} turns · updated {info.updated_at}")
    for turn in opened.turns:
        click.echo(f"\nQ{turn.idx + 1}: {turn.question}")
        if turn.searched_for and turn.searched_for != turn.question:
            click.echo(f"searched for: {turn.searched_for}")
        answer = turn.answer
        text = "(refused)" if answer.get("refused") else str(answer.get("text", ""))
        click.echo(f"A{turn.idx + 1} (answer {turn.answer_id}): {text}")
        for citation in answer.get("citations") or []:
            click.echo(_citation_line(citation))


@threads_group.command("show")
@_ID
@click.option("--json", "as_json", is_flag=True, help="Print the thread as the HTTP API does.")
@click.pass_obj
def threads_show(app: AppContext, thread_id: str, as_json: bool) -> None:
    """One thread: each question and answer, each citation with its state checked again now.

    A citation's state: CURRENT (still on its page at its span), CHANGED (the document's text
    differs there now), DELETED, HIDDEN (no longer visible), UNCHECKED (shown as unverified
    when answered); each but CURRENT with its reason.
    """
    with app.service() as service:
        opened = service.thread(thread_id)
    if as_json:
        click.echo(json.dumps(opened.to_json(), ensure_ascii=False))
        return
    _print_thread(opened)


@threads_group.command("rename")
@_ID
@click.argument("title")
@click.pass_obj
def threads_rename(app: AppContext, thread_id: str, title: str) -> None:
    """Give thread ID the title TITLE (spaces collapsed, at most 200 characters)."""
    with app.service() as service:
        info = service.rename_thread(thread_id, title)
    click.echo(f"renamed {info.id}: {info.title}")


@threads_group.command("delete")
@_ID
@click.pass_obj
def threads_delete(app: AppContext, thread_id: str) -> None:
    """Delete thread ID (the answer log keeps its answers, for `verify` and `export --answer`)."""
    with app.service() as service:
        service.delete_thread(thread_id)
    click.echo(f"deleted thread {thread_id}")
