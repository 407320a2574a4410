"""Accounts and API tokens as use cases: who may manage them, and what a removal, a sign-in or a
token does, for every door (the CLI's ``users`` and ``tokens``, the web app's login and admin
page). :mod:`truthbase.accounts` holds the mechanics (hashes, sessions, token secrets); the
rules a door must not re-decide are here:

* Managing accounts (add, remove, list, usage) is for those who see everything: admins, the
  operator (the CLI) and the single local user; anyone else is :class:`~.errors.Forbidden`.
* A password is set by its user or by an admin; an API token is made, listed and revoked for
  oneself, or by an admin for anyone.
* Removing a user says what becomes of their private documents
  (:func:`truthbase.accounts.remove_user`); the uploaded files of the documents deleted go too,
  and only those (a CLI-ingested file is the operator's), as in a delete from the library.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .. import accounts
from ..access import sees_everything
from ..accounts import NewToken, Removal, UsageSource, UserRemovalStore, UserUsage, check_name
from ..errors import NotFound
from ..people import ApiTokenRecord, UserRecord, Viewer
from ..store import Accounts
from ..text.valid import quoted, require_text
from .errors import Forbidden
from .lifecycle import uploads_dir

__all__ = [
    "ADMINS_ONLY",
    "SignIn",
    "add_user",
    "check_name",
    "create_token",
    "remove_user",
    "require_admin",
    "revoke_token",
    "set_password",
    "sign_in",
    "tokens",
    "usage",
    "users",
]

ADMINS_ONLY = "admins only"
_NOT_YOURS = "only its user or an admin may do this"


#: The longest label of an API token (``tokens create --name``).
MAX_TOKEN_NAME = 200


def _user_names(*names: str | None) -> None:
    """InvalidInput for a user name that is not text (a command line's bytes that are not
    UTF-8), before a store is asked for it (it raised UnicodeEncodeError: a traceback)."""
    for name in names:
        if name is not None:
            require_text(name, "user name")


def require_admin(viewer: Viewer) -> None:
    """Forbidden unless the viewer sees everything (an admin, the operator, the local user)."""
    if not sees_everything(viewer):
        raise Forbidden(ADMINS_ONLY)


def _require_self_or_admin(viewer: Viewer, name: str) -> None:
    if not sees_everything(viewer) and viewer.user != name:
        raise Forbidden(_NOT_YOURS)


def add_user(
    store: Accounts, viewer: Viewer, name: str, password: str, *, admin: bool = False
) -> UserRecord:
    """A new user (an admin's act): the name checked, the password hashed with Argon2id."""
    require_admin(viewer)
    return accounts.add_user(store, name, password, admin=admin)


def users(store: Accounts, viewer: Viewer) -> list[UserRecord]:
    """Every user, by name (admins)."""
    require_admin(viewer)
    return store.users()


def usage(store: UsageSource, viewer: Viewer) -> list[UserUsage]:
    """Each user's counted chats now and what they hold (admins)."""
    require_admin(viewer)
    return accounts.usage(store, time.time())


def remove_user(
    store: UserRemovalStore,
    viewer: Viewer,
    name: str,
    *,
    transfer_to: str | None,
    delete_documents: bool,
    data_dir: Path,
) -> Removal:
    """Remove user ``name`` (an admin's act) and say what becomes of their documents
    (:func:`truthbase.accounts.remove_user`); the uploaded files of those deleted are removed."""
    require_admin(viewer)
    _user_names(name, transfer_to)
    removal = accounts.remove_user(
        store, name, transfer_to=transfer_to, delete_documents=delete_documents
    )
    uploads = uploads_dir(data_dir).resolve()
    for path in removal.deleted:
        stored = Path(path).resolve()
        if uploads in stored.parents:  # only uploads: CLI-ingested files are the operator's
            stored.unlink(missing_ok=True)
    return removal


def set_password(store: Accounts, viewer: Viewer, name: str, password: str) -> None:
    """A new password for ``name`` (its user or an admin); their sessions end."""
    _user_names(name)
    _require_self_or_admin(viewer, name)
    accounts.set_password(store, name, password)


def create_token(store: Accounts, viewer: Viewer, user: str, name: str | None = None) -> NewToken:
    """A new API token acting as ``user`` (for oneself, or an admin's for anyone); its secret
    is in the result only."""
    _user_names(user)
    if name is not None:
        require_text(name, "token name", max_chars=MAX_TOKEN_NAME)
    _require_self_or_admin(viewer, user)
    return accounts.create_token(store, user, name)


def tokens(store: Accounts, viewer: Viewer, user: str | None = None) -> list[ApiTokenRecord]:
    """The API tokens (never their secrets): ``user``'s, or everyone's (None, admins); a viewer
    who does not see everything sees only their own."""
    _user_names(user)
    if not sees_everything(viewer):
        if viewer.user is None or user not in (None, viewer.user):
            raise Forbidden(_NOT_YOURS)
        user = viewer.user
    if user is None:
        return store.tokens(None)
    record = store.user(user)  # tokens name their user by id
    if record is None:
        raise NotFound(f"no user {quoted(user)}")
    return store.tokens(record.id)


def revoke_token(store: Accounts, viewer: Viewer, token_id: str) -> None:
    """Revoke a token (its user's or an admin's act): it stops working at once. A token of
    someone else's is NotFound to a viewer who does not see everything, as a missing one."""
    require_text(token_id, "token id")
    if not sees_everything(viewer) and not any(t.id == token_id for t in tokens(store, viewer)):
        raise NotFound(
            f"no token {quoted(token_id)} that is not revoked already (truthbase tokens list)"
        )
    accounts.revoke_token(store, token_id)


@dataclass(frozen=True, slots=True)
class SignIn:
    """A login that succeeded: the user and the new session's id (the cookie's, never stored)."""

    user: UserRecord
    session_id: str


def sign_in(store: Accounts, name: str, password: str, lifetime_s: float) -> SignIn | None:
    """A new session for ``name`` when the password is theirs; None otherwise (the same answer,
    after the same work, for an unknown name and a wrong password)."""
    user = accounts.authenticate(store, name, password)
    if user is None:
        return None
    return SignIn(user, accounts.create_session(store, user, time.time(), lifetime_s))
