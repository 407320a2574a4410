"""Collections: named lists of documents a user keeps, to limit questions to.

A collection is its user's (the operator and the local user without accounts share the ones
kept under no user); nobody else sees, lists or uses it, admins included: another user's
collection is NotFound, as one that does not exist. Only documents the viewer may see go in
(NotFound otherwise, as everywhere, :mod:`truthbase.access`), and a listing shows only the
members the viewer may still see. What a question reads of a collection is decided by the one
scope rule, :func:`truthbase.access.scope_of`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterable

from ..errors import InvalidInput, NotFound
from ..people import CollectionRecord, Viewer
from ..store import Collections
from ..text.valid import BIDI_CONTROL, has_visible, quoted, require_text

__all__ = [
    "MAX_COLLECTIONS",
    "MAX_DOCUMENTS",
    "MAX_NAME",
    "change_collection",
    "check_name",
    "collection_members",
    "create_collection",
    "delete_collection",
    "list_collections",
    "rename_collection",
]

#: Collections one user may keep, documents one collection may hold, characters of a name: a
#: user's list stays a list, and a scope a bounded set for the arms' filter.
MAX_COLLECTIONS = 200
MAX_DOCUMENTS = 2000
MAX_NAME = 100
# A name is a path segment of the API and a CLI argument: no slash, no control characters (C0,
# C1, line and paragraph separators), no bidirectional controls (a name that reads as another).
_BAD_NAME = re.compile(r"[/\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_name(name: str) -> str:
    """``name`` stripped; InvalidInput when it is empty, too long, has a slash, a control or a
    bidirectional control character, or nothing visible (a zero-width space alone)."""
    cleaned = require_text(name, "collection name").strip()
    if (
        not has_visible(cleaned)
        or len(cleaned) > MAX_NAME
        or _BAD_NAME.search(cleaned)
        or BIDI_CONTROL.search(cleaned)
    ):
        raise InvalidInput(
            f"collection name {quoted(name)}: 1 to {MAX_NAME} characters with one visible, "
            "no slash, control or bidirectional control character"
        )
    return cleaned


def _missing(name: str) -> NotFound:
    return NotFound(f"no collection {quoted(name)}")


def _shown(collection: CollectionRecord, visible: Collection[str]) -> CollectionRecord:
    members = tuple(d for d in collection.documents if d in visible)
    return CollectionRecord(
        name=collection.name,
        user_id=collection.user_id,
        documents=members,
        created_at=collection.created_at,
    )


def list_collections(
    store: Collections, viewer: Viewer, visible: Collection[str]
) -> list[CollectionRecord]:
    """The viewer's collections by name, each with the members in ``visible`` (the ids the
    viewer may see)."""
    return [_shown(c, visible) for c in store.collections(viewer.user_id)]


def collection_members(store: Collections, viewer: Viewer, name: str) -> frozenset[str]:
    """Every id the viewer's collection ``name`` holds (the scope rule keeps the visible ones);
    NotFound when the viewer has no such collection."""
    found = store.collection(viewer.user_id, check_name(name))
    if found is None:
        raise _missing(name)
    return frozenset(found.documents)


def create_collection(
    store: Collections, viewer: Viewer, name: str, documents: Iterable[str] = ()
) -> CollectionRecord:
    """A new collection of the viewer's holding ``documents`` (ids the caller has found
    visible); InvalidInput for a name taken or a limit passed."""
    members = tuple(sorted(set(documents)))
    if len(members) > MAX_DOCUMENTS:
        raise InvalidInput(f"a collection holds at most {MAX_DOCUMENTS} documents")
    if len(store.collections(viewer.user_id)) >= MAX_COLLECTIONS:
        raise InvalidInput(f"you keep {MAX_COLLECTIONS} collections already: delete one first")
    created = CollectionRecord(
        name=check_name(name),
        user_id=viewer.user_id,
        documents=members,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    store.add_collection(created)
    return created


def rename_collection(store: Collections, viewer: Viewer, name: str, new_name: str) -> None:
    """Rename the viewer's collection; NotFound when there is none, InvalidInput when the new
    name is taken."""
    if not store.rename_collection(viewer.user_id, check_name(name), check_name(new_name)):
        raise _missing(name)


def change_collection(
    store: Collections,
    viewer: Viewer,
    name: str,
    *,
    add: Collection[str] = (),
    remove: Collection[str] = (),
) -> None:
    """Add ``add`` (ids the caller has found visible) to the viewer's collection and take
    ``remove`` out; NotFound when there is none, InvalidInput past :data:`MAX_DOCUMENTS`."""
    found = store.collection(viewer.user_id, check_name(name))
    if found is None:
        raise _missing(name)
    after = (set(found.documents) | set(add)) - set(remove)
    if len(after) > MAX_DOCUMENTS:
        raise InvalidInput(f"a collection holds at most {MAX_DOCUMENTS} documents")
    if not store.change_collection(viewer.user_id, found.name, add=add, remove=remove):
        raise _missing(name)


def delete_collection(store: Collections, viewer: Viewer, name: str) -> None:
    """Delete the viewer's collection (its documents stay in the library); NotFound when
    there is none."""
    if not store.remove_collection(viewer.user_id, check_name(name)):
        raise _missing(name)
