"""A document's life after ingest: rename, change its visibility, re-ingest, delete, and the
ingest jobs a viewer sees.

Who may do what is :mod:`truthbase.access`'s: a document the viewer may not see is NotFound
(as a missing one); one they may see but not manage (another user's shared document) is
:class:`~.errors.Forbidden` for the changes only. One document per content: a user who uploaded
the same bytes as another *holds* it; deleting lets go of that hold, and an owner whose document
others hold leaves it to them (the first holder owns it): :func:`delete_document`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, Protocol

from ..access import may_manage, require_visible, sees_everything
from ..jobs import Job, JobDraft, UploadLimits
from ..model import DocumentInfo
from ..people import Viewer
from ..store import DocumentAdmin, DocumentReader, Documents, Jobs
from .errors import Conflict, Forbidden

__all__ = [
    "Deletion",
    "ManagedDocuments",
    "Reingestable",
    "change_document",
    "delete_document",
    "reingest_document",
    "uploads_dir",
    "visible_jobs",
]

#: What a delete did: the document is gone, or the viewer let go of their hold, or the owner
#: left it to its first holder.
Deletion = Literal["deleted", "released", "inherited"]

_NOT_YOURS = "only its owner or an admin may change this document"


def uploads_dir(data_dir: Path) -> Path:
    """Where the server keeps uploaded files (by their hash), under the index's data folder."""
    return data_dir / "uploads"


class ManagedDocuments(Documents, DocumentAdmin, Protocol):
    """What a change or a delete reads and writes: the documents, their access, titles and
    holders."""


class Reingestable(DocumentReader, Jobs, Protocol):
    """What a re-ingest reads and writes: the document, and the job queue."""


def _touchable(store: DocumentReader, viewer: Viewer, doc_id: str) -> DocumentInfo:
    """The document when the viewer may manage it or holds it; NotFound when hidden,
    Forbidden when only readable."""
    info = require_visible(viewer, store.document(doc_id), doc_id)
    if not (may_manage(viewer, info) or viewer.user_id in info.holders):
        raise Forbidden(_NOT_YOURS)
    return info


def _managed(
    store: DocumentReader, viewer: Viewer, doc_id: str, message: str = _NOT_YOURS
) -> DocumentInfo:
    info = _touchable(store, viewer, doc_id)
    if not may_manage(viewer, info):
        raise Forbidden(message)
    return info


def change_document(
    store: ManagedDocuments,
    viewer: Viewer,
    doc_id: str,
    *,
    title: str | None = None,
    visibility: Literal["private", "shared"] | None = None,
) -> None:
    """Rename a document and/or change its visibility (its owner or an admin). An operator's
    document made private becomes the viewer's."""
    info = _managed(store, viewer, doc_id)
    if visibility is not None and visibility != info.visibility:
        owner = info.owner if info.owner is not None or visibility == "shared" else viewer.user_id
        store.set_document_access(doc_id, owner, visibility)
    if title is not None:
        store.rename_document(doc_id, title.strip())


def delete_document(
    store: ManagedDocuments, viewer: Viewer, doc_id: str, data_dir: Path
) -> Deletion:
    """Delete a document: its units, chunks, vectors, token signs, segments and uploaded file,
    in one transaction (stored answers that cited it keep their text). A holder who may not
    manage it lets go of their hold; an owner whose document others hold leaves it to the first
    holder. Only an uploaded file is removed: a CLI-ingested file is the user's."""
    info = _touchable(store, viewer, doc_id)
    if not may_manage(viewer, info):
        store.remove_holder(doc_id, str(viewer.user_id))
        return "released"
    if info.holders and info.owner == viewer.user_id:
        heir = info.holders[0]
        store.set_document_access(doc_id, heir, info.visibility)
        store.remove_holder(doc_id, heir)
        return "inherited"
    path = store.delete_document(doc_id)
    if path is not None:
        root = uploads_dir(data_dir).resolve()
        stored = Path(path).resolve()
        if root in stored.parents:
            stored.unlink(missing_ok=True)
    return "deleted"


def reingest_document(store: Reingestable, viewer: Viewer, doc_id: str, max_attempts: int) -> Job:
    """A job that ingests the document again from its stored file (a new extractor, new
    settings), replacing it in one transaction with its title, owner and visibility kept."""
    info = _managed(store, viewer, doc_id, "only its owner or an admin may re-ingest this document")
    path = Path(info.path)
    if not path.is_file():
        raise Conflict("the document's file is gone; upload it again")
    return store.add_job(
        JobDraft(
            kind="reingest",
            owner=viewer.user_id,
            filename=path.name,
            file=str(path.resolve()),
            sha256=doc_id,
            size=path.stat().st_size,
            max_attempts=max_attempts,
        ),
        time.time(),
        UploadLimits(),
    )


def visible_jobs(store: Jobs, viewer: Viewer) -> list[Job]:
    """The viewer's ingest jobs (everyone's for those who see everything), newest first."""
    if sees_everything(viewer):
        return store.jobs()
    return store.jobs(viewer.user_id, everyone=False)
