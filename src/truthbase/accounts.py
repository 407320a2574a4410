"""Accounts: users with Argon2id password hashes, login sessions and API tokens, over the store's
:class:`~truthbase.store.base.Accounts` tables. The CLI (`truthbase users`, `truthbase tokens`)
and the server (:mod:`truthbase.server.auth`) call these; neither touches a hash itself.

Secrets the client holds (a session id in the cookie, an API token) are 256 random bits; the
store keeps only their sha256. A fast hash is enough for secrets of that entropy (nothing to
guess), and it lets every request be checked with one indexed lookup; passwords, which people
choose, get Argon2id (argon2-cffi's defaults: RFC 9106's low-memory profile).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from .errors import InvalidInput, NotFound
from .people import ApiTokenRecord, SessionRecord, UserRecord, Viewer
from .quota import QuotaUsage, client_key_for
from .store import Accounts, DocumentAdmin, DocumentReader, Documents, QuotaCounters
from .store.codec import now_iso
from .text.valid import quoted

__all__ = [
    "TOKEN_PREFIX",
    "NewToken",
    "Removal",
    "UsageSource",
    "UserRemovalStore",
    "UserUsage",
    "add_user",
    "authenticate",
    "check_name",
    "create_session",
    "create_token",
    "end_session",
    "hash_password",
    "remove_user",
    "revoke_token",
    "secret_hash",
    "session_viewer",
    "set_password",
    "token_viewer",
    "usage",
    "verify_password",
    "viewer_of",
]

#: API tokens start with this, so a leaked one is recognizable (secret scanners, logs).
TOKEN_PREFIX = "tb_"
#: Shortest password `users add` / `users passwd` accept.
MIN_PASSWORD = 8
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_HASHER = PasswordHasher()
# Verifying against this when the user does not exist makes a wrong name cost as much time as a
# wrong password, so response times do not tell which names exist.
_DUMMY_HASH = _HASHER.hash("not a password of anyone")


def check_name(name: str) -> str:
    """A user name: 1-64 characters of letters, digits and ``._@-``, starting with a letter or
    digit (it appears in URLs, logs and quota keys)."""
    if not _NAME.match(name):
        raise InvalidInput(
            f"invalid user name {quoted(name)}: 1-64 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit"
        )
    return name


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise InvalidInput(f"a password needs at least {MIN_PASSWORD} characters")
    return _HASHER.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def secret_hash(secret: str) -> str:
    """What the store keeps of a session id or an API token."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def add_user(store: Accounts, name: str, password: str, *, admin: bool = False) -> UserRecord:
    record = UserRecord(
        name=check_name(name),
        password_hash=hash_password(password),
        admin=admin,
        created_at=now_iso(),
    )
    store.add_user(record)
    return record


def viewer_of(user: UserRecord | None) -> Viewer | None:
    """The viewer a signed-in ``user`` is (None for no user)."""
    if user is None:
        return None
    return Viewer(user=user.name, admin=user.admin, user_id=user.id)


@dataclass(frozen=True, slots=True)
class Removal:
    """What :func:`remove_user` did with the removed user's documents."""

    transferred: int  # documents now the admin's (--transfer-to)
    deleted: tuple[str, ...]  # stored paths of the private documents deleted (the caller
    # removes an uploaded file)
    inherited: int  # private documents others held: the first holder owns each now
    kept: int  # documents left with the removed user's id (shared ones; nobody manages them
    # but admins)


class UserRemovalStore(Accounts, Documents, DocumentAdmin, Protocol):
    """What removing a user reads and writes: the accounts, their documents' owners, and the
    documents' holders (or the documents themselves, deleted)."""


def remove_user(
    store: UserRemovalStore,
    name: str,
    *,
    transfer_to: str | None = None,
    delete_documents: bool = False,
) -> Removal:
    """Remove user ``name`` (sessions, tokens and holds go with them) and say what becomes of
    their documents: every one becomes admin ``transfer_to``'s, or (``delete_documents``) their
    private ones are deleted, except those others hold, which the first holder inherits (as a
    delete from the library does). Without either, InvalidInput when they own private
    documents, and nothing is removed: those would be nobody's."""
    user = store.user(name)
    if user is None:
        raise NotFound(f"no user {quoted(name)}")
    if transfer_to is not None and delete_documents:
        raise InvalidInput("either --transfer-to or --delete-documents, not both")
    owned = [d for d in store.list_documents() if d.owner == user.id]
    private = [d for d in owned if d.visibility == "private"]
    heir = store.user(transfer_to) if transfer_to is not None else None
    if transfer_to is not None and (heir is None or not heir.admin or heir.id == user.id):
        raise InvalidInput(
            f"--transfer-to needs another user who is an admin, not {quoted(transfer_to)}"
        )
    if private and heir is None and not delete_documents:
        raise InvalidInput(
            f"{name} owns {len(private)} private documents: say what becomes of them with "
            "--transfer-to ADMIN or --delete-documents"
        )
    if heir is not None:
        for document in owned:
            store.set_document_access(document.id, heir.id, document.visibility)
            store.remove_holder(document.id, heir.id)  # the owner now, not a holder
        store.remove_user(name)
        return Removal(transferred=len(owned), deleted=(), inherited=0, kept=0)
    deleted: list[str] = []
    inherited = 0
    for document in private:
        holders = [h for h in document.holders if h != user.id]
        if holders:
            store.set_document_access(document.id, holders[0], "private")
            store.remove_holder(document.id, holders[0])
            inherited += 1
        else:
            path = store.delete_document(document.id)
            if path is not None:
                deleted.append(path)
    store.remove_user(name)
    return Removal(
        transferred=0, deleted=tuple(deleted), inherited=inherited, kept=len(owned) - len(private)
    )


def set_password(store: Accounts, name: str, password: str) -> None:
    """A new password; every session of the user ends (API tokens stay: revoke them apart)."""
    if not store.set_password(name, hash_password(password)):
        raise NotFound(f"no user {quoted(name)}")


def authenticate(store: Accounts, name: str, password: str) -> UserRecord | None:
    """The user when the password is theirs; None otherwise (also for an unknown name, after
    the same Argon2 work)."""
    user = store.user(name) if _NAME.match(name) else None
    if user is None:
        verify_password(_DUMMY_HASH, password)
        return None
    if not verify_password(user.password_hash, password):
        return None
    if _HASHER.check_needs_rehash(user.password_hash):
        store.set_password(name, _HASHER.hash(password))
    return user


def create_session(store: Accounts, user: UserRecord, now: float, lifetime_s: float) -> str:
    """A new login session of ``user`` (kept under their id); returns the session id (the
    cookie's, never stored)."""
    session_id = secrets.token_urlsafe(32)
    store.add_session(
        SessionRecord(
            id_hash=secret_hash(session_id),
            user_id=user.id,
            created_at=now,
            expires_at=now + lifetime_s,
        )
    )
    return session_id


def session_viewer(store: Accounts, session_id: str, now: float) -> Viewer | None:
    """Who holds this session id: None when it is unknown or expired (an expired one is
    forgotten), or its user is gone."""
    digest = secret_hash(session_id)
    session = store.session(digest)
    if session is None:
        return None
    if session.expires_at <= now:
        store.remove_session(digest)
        return None
    return viewer_of(store.user_by_id(session.user_id))


def end_session(store: Accounts, session_id: str) -> None:
    store.remove_session(secret_hash(session_id))


@dataclass(frozen=True, slots=True)
class NewToken:
    """A token just made: ``secret`` is shown once and never stored."""

    record: ApiTokenRecord
    secret: str


def create_token(store: Accounts, user: str, name: str | None = None) -> NewToken:
    """A new token acting as the user named ``user`` (kept under their id)."""
    found = store.user(user)
    if found is None:
        raise NotFound(f"no user {quoted(user)}: add them first (truthbase users add)")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = ApiTokenRecord(
        id=secrets.token_hex(6),
        secret_hash=secret_hash(secret),
        user_id=found.id,
        name=name,
        created_at=now_iso(),
    )
    store.add_token(record)
    return NewToken(record=record, secret=secret)


def token_viewer(store: Accounts, secret: str) -> Viewer | None:
    """Who holds this API token: None when it is unknown or revoked, or its user is gone."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    token = store.token_by_hash(secret_hash(secret))
    if token is None or token.revoked:
        return None
    return viewer_of(store.user_by_id(token.user_id))


def revoke_token(store: Accounts, token_id: str) -> None:
    if not store.revoke_token(token_id, now_iso()):
        raise NotFound(
            f"no token {quoted(token_id)} that is not revoked already (truthbase tokens list)"
        )


@dataclass(frozen=True, slots=True)
class UserUsage:
    """One user's use, for admins (`truthbase users usage`, the admin page)."""

    name: str
    admin: bool
    quota: QuotaUsage
    documents: int  # documents they own
    private: int  # of those, private
    tokens: int  # API tokens not revoked

    def to_json(self) -> dict[str, Any]:
        """The row as `users usage --json` and the admin page show it."""
        return {
            "name": self.name,
            "admin": self.admin,
            "chats_this_minute": self.quota.minute,
            "chats_today": self.quota.day,
            "agent_today": self.quota.agent_day,
            "documents": self.documents,
            "private_documents": self.private,
            "tokens": self.tokens,
        }


class UsageSource(Accounts, DocumentReader, QuotaCounters, Protocol):
    """What a usage report reads: the users and their tokens, the documents' owners, and the
    quota counters."""


def usage(store: UsageSource, now: float) -> list[UserUsage]:
    """Every user's counted chats in the current windows and what they hold, by name."""
    owned: dict[str, list[bool]] = {}  # by user id
    for document in store.list_documents():
        if document.owner is not None:
            owned.setdefault(document.owner, []).append(document.visibility == "private")
    live: dict[str, int] = {}  # by user id
    for token in store.tokens():
        if not token.revoked:
            live[token.user_id] = live.get(token.user_id, 0) + 1
    return [
        UserUsage(
            name=user.name,
            admin=user.admin,
            quota=store.quota_usage(client_key_for(user.id, ""), now),
            documents=len(owned.get(user.id, [])),
            private=sum(owned.get(user.id, [])),
            tokens=live.get(user.id, 0),
        )
        for user in store.users()
    ]
