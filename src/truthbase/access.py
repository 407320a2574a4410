"""Who sees what: the one access policy. Callers ask it; they do not re-decide it.

Every document has an owner (a user's stable id, never their name, which a later user may be
given; or None for the operator's CLI ingest) and a
visibility: ``shared`` documents are seen by every user, ``private`` ones by their owner and its
holders alone (users who uploaded the same bytes: one document per content, each uploader holds
it; :mod:`truthbase.ingest.worker`).
The operator at the command line and the single local user of a loopback server without
accounts (:data:`truthbase.people.OPERATOR`) see every document; so do admins, who manage the
library (a private document is private from the other users, not from whoever runs the index:
they can read its file anyway).

A document the viewer may not see does not exist for them: every read path answers it as it
answers an unknown id (:func:`require_visible` raises :class:`~truthbase.errors.NotFound`, a
404), never "forbidden", which would tell them it is there.

The retrieval arms filter *inside* the arm by :func:`visible_ids` (the set of document ids a
viewer may read, or None for all), so a user's top-k is the top-k of what they can see, not
what is left of everyone's top-k.

Pure functions over records; the ground floor (imports nothing above :mod:`.model`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .errors import InvalidInput, NotFound
from .model import DocumentInfo
from .people import Viewer

__all__ = [
    "DocScope",
    "may_manage",
    "may_see",
    "narrow",
    "owns_answer",
    "require_visible",
    "scope_of",
    "sees_everything",
    "visible_ids",
]

#: The documents a read may touch: a set of ids, or None for every document (no filter).
DocScope = frozenset[str] | None


def sees_everything(viewer: Viewer) -> bool:
    """The operator, the local user without accounts, and admins read every document."""
    return viewer.local or viewer.admin


def may_see(viewer: Viewer, document: DocumentInfo) -> bool:
    """Shared documents, the viewer's own, and everything for those who see everything."""
    if sees_everything(viewer) or document.visibility == "shared":
        return True
    return viewer.user_id is not None and (
        document.owner == viewer.user_id or viewer.user_id in document.holders
    )


def may_manage(viewer: Viewer, document: DocumentInfo) -> bool:
    """Rename, change the visibility of, re-ingest or delete: its owner, or an admin (or the
    operator). A shared document of another user is readable, not manageable."""
    if sees_everything(viewer):
        return True
    return document.owner is not None and document.owner == viewer.user_id


def owns_answer(viewer: Viewer, asked_by: str | None) -> bool:
    """A stored answer is its asker's (feedback on it, its export): theirs, or everyone's for
    those who see everything. An answer of no known asker (kept before answers had one, or
    asked by the operator) is only for those."""
    return sees_everything(viewer) or (asked_by is not None and asked_by == viewer.user_id)


def visible_ids(viewer: Viewer, documents: Iterable[DocumentInfo]) -> DocScope:
    """The ids of ``documents`` the viewer may see; None (no filter at all) when they see
    everything, so the arms of the operator's and the local user's searches stay as they were."""
    if sees_everything(viewer):
        return None
    return frozenset(d.id for d in documents if may_see(viewer, d))


def narrow(scope: DocScope, doc_id: str | None) -> DocScope:
    """``scope`` limited to one document (agent mode's ``doc``); an id outside the scope leaves
    nothing, as an unknown id would."""
    if doc_id is None:
        return scope
    if scope is None or doc_id in scope:
        return frozenset({doc_id})
    return frozenset()


def scope_of(
    visible: Collection[str],
    documents: Iterable[str] = (),
    collection: Collection[str] | None = None,
) -> frozenset[str]:
    """The one scope rule of a question (every mode, every door): the documents asked for (the
    ids named, and the members of a collection) that the viewer may see, where ``visible`` is
    every id the viewer may read.

    A named id the viewer may not see is NotFound, as a missing one (nothing leaked). A
    collection's members are kept as far as the viewer may still see them (one made private
    since, or deleted, drops out). A scope left empty is InvalidInput (a 400, exit 2): a
    question with nothing to read would only ever be refused."""
    named = frozenset(documents)
    for doc_id in sorted(named):
        if doc_id not in visible:
            raise NotFound(f"no document {doc_id}")
    members = frozenset(d for d in collection or () if d in visible)
    scope = named | members
    if not scope:
        raise InvalidInput("the question's scope holds no document you may read")
    return scope


def require_visible(viewer: Viewer, document: DocumentInfo | None, doc_id: str) -> DocumentInfo:
    """``document`` when it exists and the viewer may see it; NotFound (404) otherwise, with the
    same message for both, so a response never tells a hidden document from a missing one."""
    if document is None or not may_see(viewer, document):
        raise NotFound(f"no document {doc_id}")
    return document
