"""`collections`: named collections of documents to limit questions to, and the `--doc` and
`--collection` options of `ask` and `search` that use them. The command line's collections
are the operator's (the same ones the local user of a server without accounts keeps)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from .common import AppContext, console

__all__ = ["COLLECTION_OPTION", "DOC_OPTION", "collections_group"]

DOC_OPTION = click.option(
    "--doc",
    "doc_ids",
    multiple=True,
    metavar="ID",
    help="Only this document (its id, or a unique prefix of at least 4 characters); repeat "
    "it for several.",
)
COLLECTION_OPTION = click.option(
    "--collection",
    default=None,
    metavar="NAME",
    help="Only the documents of this collection (`truthbase collections`); with --doc, both.",
)


@click.group("collections")
def collections_group() -> None:
    """Named collections of documents: `ask` and `search` take `--collection NAME`."""


@collections_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def collections_list(app: AppContext, as_json: bool) -> None:
    """The collections, by name, with their documents."""
    with app.service() as service:
        kept = service.collections()
        titles = {d.id: d.title for d in service.documents()}
    if as_json:
        rows = [{"name": c.name, "documents": list(c.documents)} for c in kept]
        click.echo(json.dumps({"collections": rows}, indent=2))
        return
    table = Table(title=f"{len(kept)} collections")
    table.add_column("name")
    table.add_column("documents")
    for collection in kept:
        names = [f"{d[:12]} {titles.get(d, '')}" for d in collection.documents]
        table.add_row(collection.name, "\n".join(names) or "(none)")
    console.print(table)


@collections_group.command("create")
@click.argument("name")
@click.argument("documents", nargs=-1, metavar="[ID]...")
@click.pass_obj
def collections_create(app: AppContext, name: str, documents: tuple[str, ...]) -> None:
    """A new collection NAME holding the documents ID... (ids or unique prefixes)."""
    with app.service() as service:
        created = service.create_collection(name, documents)
    console.print(f"created {created.name} ({len(created.documents)} documents)", highlight=False)


@collections_group.command("add")
@click.argument("name")
@click.argument("documents", nargs=-1, required=True, metavar="ID...")
@click.pass_obj
def collections_add(app: AppContext, name: str, documents: tuple[str, ...]) -> None:
    """Add documents to collection NAME."""
    with app.service() as service:
        service.change_collection(name, add=documents)
    console.print(f"added {len(documents)} to {name}", highlight=False)


@collections_group.command("remove")
@click.argument("name")
@click.argument("documents", nargs=-1, required=True, metavar="ID...")
@click.pass_obj
def collections_remove(app: AppContext, name: str, documents: tuple[str, ...]) -> None:
    """Take documents out of collection NAME (they stay in the library)."""
    with app.service() as service:
        service.change_collection(name, remove=documents)
    console.print(f"removed {len(documents)} from {name}", highlight=False)


@collections_group.command("rename")
@click.argument("name")
@click.argument("new_name")
@click.pass_obj
def collections_rename(app: AppContext, name: str, new_name: str) -> None:
    """Rename collection NAME to NEW_NAME."""
    with app.service() as service:
        service.rename_collection(name, new_name)
    console.print(f"renamed {name} to {new_name}", highlight=False)


@collections_group.command("delete")
@click.argument("name")
@click.pass_obj
def collections_delete(app: AppContext, name: str) -> None:
    """Delete collection NAME (its documents stay in the library)."""
    with app.service() as service:
        service.delete_collection(name)
    console.print(f"deleted {name}", highlight=False)
