"""Shared threads as use cases, for every door: a read-only link to a saved thread, made and
revoked by the thread's owner, opened by a signed-in user who may see what it cites.

The rules a door must not re-decide are here:

* Only the thread's owner shares it or revokes its link (anyone else's thread is NotFound, as
  :func:`~.threads.own_thread` says), and only a signed-in owner: a link opens for signed-in
  users only, so the local user's threads have no one to be shared with (Forbidden).
* A link is an unguessable token (``secrets.token_urlsafe``); sharing a thread that has an open
  link gives that link again; revoking closes every open link of the thread, for good.
* Opening a link needs a signed-in user (:class:`~.errors.NotSignedIn`) who may see every
  document the thread shows: each cited document and each source's. One they may not see, or
  one deleted since (whether the user might have seen it cannot be known any more), makes the
  link NotFound with the very message of an unknown or revoked token, so that the answer says
  nothing about what the thread holds.
* An opened link is read-only: it gives the turns, each citation checked again as for its
  owner (:func:`~.threads.rechecked_turns`); a question asked "in" the thread is refused as any
  other user's (:func:`~.threads.continue_thread`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from ..access import may_see
from ..errors import NotFound
from ..people import Viewer
from ..store import ThreadShares
from ..turns import StoredTurn
from .errors import Forbidden, NotSignedIn
from .threads import OpenedThread, ThreadStore, own_thread, rechecked_turns

__all__ = [
    "SHARE_PATH",
    "UNKNOWN_SHARE",
    "ThreadShare",
    "open_shared",
    "revoke_share",
    "share_thread",
    "shown_documents",
]

#: What an unknown, revoked or not-for-this-user link says (the same for each).
UNKNOWN_SHARE = "no such shared thread"
#: Where the chat page opens a link, with its token appended.
SHARE_PATH = "/?shared="
_TOKEN_BYTES = 24


class _Store(ThreadStore, ThreadShares, Protocol):
    """What the share use cases read and write."""


@dataclass(frozen=True, slots=True)
class ThreadShare:
    """A thread's open link: its token and the chat page's path that opens it."""

    token: str

    @property
    def path(self) -> str:
        return SHARE_PATH + self.token

    def to_json(self) -> dict[str, Any]:
        return {"token": self.token, "url": self.path}


def _signed_in_owner(viewer: Viewer) -> None:
    if viewer.local or viewer.user_id is None:
        raise Forbidden("a thread is shared by a signed-in user (its link opens for those only)")


def share_thread(store: _Store, viewer: Viewer, thread_id: str) -> ThreadShare:
    """The open link of the viewer's thread: the one it has, else a new one."""
    own_thread(store, viewer, thread_id)
    _signed_in_owner(viewer)
    token = store.open_share(thread_id)
    if token is None:
        token = secrets.token_urlsafe(_TOKEN_BYTES)
        store.add_share(token, thread_id)
    return ThreadShare(token)


def revoke_share(store: _Store, viewer: Viewer, thread_id: str) -> None:
    """Close every open link of the viewer's thread (none open is no error)."""
    own_thread(store, viewer, thread_id)
    store.revoke_shares(thread_id)


def shown_documents(turns: tuple[StoredTurn, ...] | list[StoredTurn]) -> set[str]:
    """Every document whose text the turns show: each citation's and each source's."""
    found: set[str] = set()
    for turn in turns:
        for key in ("citations", "sources"):
            items = turn.answer.get(key)
            for item in items if isinstance(items, list) else ():
                doc_id = item.get("doc_id") if isinstance(item, dict) else None
                if isinstance(doc_id, str):
                    found.add(doc_id)
    return found


def open_shared(store: _Store, viewer: Viewer, token: str) -> OpenedThread:
    """The thread ``token`` opens, read-only, each citation checked again as ``viewer`` may see
    it; NotFound (one message for each case) unless the link is open and the viewer may see
    every document the thread shows."""
    if viewer.local or viewer.user_id is None:
        raise NotSignedIn("a shared thread opens for signed-in users only")
    thread_id = store.shared_thread_id(token)
    info = store.thread(thread_id) if thread_id is not None else None
    if thread_id is None or info is None:
        raise NotFound(UNKNOWN_SHARE)
    for doc_id in sorted(shown_documents(store.thread_turns(thread_id))):
        document = store.document(doc_id)
        if document is None or not may_see(viewer, document):
            raise NotFound(UNKNOWN_SHARE)
    return OpenedThread(info, rechecked_turns(store, viewer, thread_id))
