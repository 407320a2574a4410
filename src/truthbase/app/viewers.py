"""Who is asking, as far as it is not HTTP: whether an index needs accounts on a host, the user
of an API token and of a login session. The web app's gate (:mod:`truthbase.server.auth`) and
the MCP server's (:mod:`truthbase.mcp`) both ask here, so the two decide alike."""

from __future__ import annotations

import ipaddress
import time

from ..accounts import end_session, session_viewer, token_viewer
from ..people import Viewer
from ..store import Accounts

__all__ = [
    "accounts_required",
    "bearer_secret",
    "bearer_viewer",
    "is_loopback",
    "session_holder",
    "sign_out",
]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (what `serve` binds) is reachable from this machine only."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def accounts_required(store: Accounts, host: str) -> bool:
    """Logins are required once a user exists, or whenever the server is not loopback-only."""
    return not is_loopback(host) or store.user_count() > 0


def bearer_secret(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header value; None for another scheme
    or none."""
    scheme, _, credentials = authorization.partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return credentials.strip()


def bearer_viewer(store: Accounts, authorization: str) -> Viewer | None:
    """The user of an ``Authorization: Bearer TOKEN`` header value; None without a valid,
    unrevoked token (or with another scheme)."""
    secret = bearer_secret(authorization)
    return None if secret is None else token_viewer(store, secret)


def session_holder(store: Accounts, session_id: str) -> Viewer | None:
    """The user of a login session; None when it is unknown or expired, or its user is gone."""
    return session_viewer(store, session_id, time.time())


def sign_out(store: Accounts, session_id: str) -> None:
    """End a login session."""
    end_session(store, session_id)
