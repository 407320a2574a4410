"""`users` and `tokens`: accounts of the web app and API tokens for scripts.

Passwords are read from a prompt (twice, not echoed) or, with ``--password-stdin``, from the
first line of standard input: never from the command line, where other users of the machine
could read it in the process list and the shell keeps it in its history.
"""

from __future__ import annotations

import json
import sys

import click
from rich.table import Table

from ..app.accounts import check_name
from ..errors import InvalidInput
from ..people import REMOVED_USER
from .common import AppContext, console


def _password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise InvalidInput("no password on standard input")
        return line
    password: str = click.prompt(
        "Password", hide_input=True, confirmation_prompt="Repeat the password"
    )
    return password


_STDIN = click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input (for scripts).",
)


@click.group("users")
def users_group() -> None:
    """Accounts of the web app: once one exists, every page and /api route needs a login."""


@users_group.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="May see every document and the usage page.")
@_STDIN
@click.pass_obj
def users_add(app: AppContext, name: str, admin: bool, password_stdin: bool) -> None:
    """Add user NAME (password from a prompt, or stdin); hashed with Argon2id."""
    check_name(name)  # before the prompt: a bad name asks for no password
    password = _password(password_stdin)
    with app.service(create=True) as service:
        service.add_user(name, password, admin=admin)
    console.print(f"added user {name}" + (" (admin)" if admin else ""), highlight=False)


@users_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def users_list(app: AppContext, as_json: bool) -> None:
    """The users, by name."""
    with app.service() as service:
        users = service.users()
    if as_json:
        click.echo(
            json.dumps(
                [{"name": u.name, "admin": u.admin, "created_at": u.created_at} for u in users]
            )
        )
        return
    table = Table("user", "admin", "created")
    for user in users:
        table.add_row(user.name, "yes" if user.admin else "", user.created_at)
    console.print(table)
    console.print(f"{len(users)} users", highlight=False)


@users_group.command("remove")
@click.argument("name")
@click.option(
    "--transfer-to",
    metavar="ADMIN",
    default=None,
    help="Give every document NAME owns to this admin.",
)
@click.option(
    "--delete-documents",
    is_flag=True,
    help="Delete NAME's private documents (one another user holds passes to that user).",
)
@click.pass_obj
def users_remove(
    app: AppContext, name: str, transfer_to: str | None, delete_documents: bool
) -> None:
    """Remove user NAME, their sessions, API tokens and holds. When NAME owns private documents,
    say what becomes of them: --transfer-to ADMIN or --delete-documents (refused otherwise). A
    user added later under the same name holds nothing of NAME's."""
    with app.service() as service:
        removal = service.remove_user(
            name, transfer_to=transfer_to, delete_documents=delete_documents
        )
    parts = [f"removed user {name}"]
    if removal.transferred:
        parts.append(f"{removal.transferred} documents now {transfer_to}'s")
    if removal.deleted:
        parts.append(f"{len(removal.deleted)} private documents deleted")
    if removal.inherited:
        parts.append(f"{removal.inherited} private documents passed to a holder")
    if removal.kept:
        parts.append(f"{removal.kept} shared documents stay (admins manage them)")
    console.print("; ".join(parts), highlight=False)


@users_group.command("passwd")
@click.argument("name")
@_STDIN
@click.pass_obj
def users_passwd(app: AppContext, name: str, password_stdin: bool) -> None:
    """Set NAME's password (prompt, or stdin); their sessions end, their API tokens stay."""
    password = _password(password_stdin)
    with app.service() as service:
        service.set_password(name, password)
    console.print(f"password of {name} changed; their sessions ended", highlight=False)


@users_group.command("usage")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def users_usage(app: AppContext, as_json: bool) -> None:
    """Per user: chats counted this UTC minute and day, agent chats today, documents held."""
    with app.service() as service:
        rows = service.usage()
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows]))
        return
    table = Table(
        "user", "chats/min", "chats today", "agent today", "documents", "private", "tokens"
    )
    for r in rows:
        table.add_row(
            r.name + (" (admin)" if r.admin else ""),
            str(r.quota.minute),
            str(r.quota.day),
            str(r.quota.agent_day),
            str(r.documents),
            str(r.private),
            str(r.tokens),
        )
    console.print(table)


@click.group("tokens")
def tokens_group() -> None:
    """API tokens for scripts: `Authorization: Bearer TOKEN` on every /api request."""


@tokens_group.command("create")
@click.option("--user", "user", required=True, help="The token acts as this user.")
@click.option("--name", "name", default=None, help="A label, to tell tokens apart.")
@click.pass_obj
def tokens_create(app: AppContext, user: str, name: str | None) -> None:
    """Make a token and print it once (only its hash is kept: it cannot be shown again)."""
    with app.service() as service:
        made = service.create_token(user, name)
    click.echo(made.secret)
    click.echo(
        f"token {made.record.id} for {user}: shown once, keep it secret "
        f"(revoke: truthbase tokens revoke {made.record.id})",
        err=True,
    )


@tokens_group.command("list")
@click.option("--user", "user", default=None, help="Only this user's tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def tokens_list(app: AppContext, user: str | None, as_json: bool) -> None:
    """The tokens (never their secrets): id, user, label, created, revoked."""
    with app.service() as service:
        tokens = service.tokens(user)
        names = {u.id: u.name for u in service.users()}  # tokens name their user by id
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": t.id,
                        "user": names.get(t.user_id, REMOVED_USER),
                        "name": t.name,
                        "created_at": t.created_at,
                        "revoked_at": t.revoked_at,
                    }
                    for t in tokens
                ]
            )
        )
        return
    table = Table("id", "user", "name", "created", "revoked")
    for t in tokens:
        user_name = names.get(t.user_id, REMOVED_USER)
        table.add_row(t.id, user_name, t.name or "", t.created_at, t.revoked_at or "")
    console.print(table)


@tokens_group.command("revoke")
@click.argument("token_id")
@click.pass_obj
def tokens_revoke(app: AppContext, token_id: str) -> None:
    """Revoke token TOKEN_ID (from `tokens list`): it stops working at once."""
    with app.service() as service:
        service.revoke_token(token_id)
    console.print(f"revoked token {token_id}", highlight=False)
