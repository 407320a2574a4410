"""The upload use case: received files become ingest jobs, within the upload limits.

A door receives each file into ``<data>/uploads/.incoming/`` (the web app streams a multipart
body there, :func:`receive_path` copies a file from disk) as a :class:`ReceivedFile`: its hash,
size and the kind its first bytes say. :func:`queue_uploads` decides the rest for every door:

* ``visibility`` is ``private``, ``shared`` or None (the default: private for users);
* a file that is neither PDF nor EPUB (by content) is a failed job, ``unsupported``;
* any other file is placed by its hash (``uploads/<sha[:2]>/<sha>.<kind>``) and queued; the store
  checks the limits (files per day, bytes a user may hold) in the transaction that queues it;
* the first file a limit refuses stops the upload: the files before it stay queued, it and the
  ones after it are removed (its placed file too, unless a document uses the same bytes), and
  the result names the limit (:class:`UploadResult`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from ..errors import InvalidInput
from ..extract.sniff import HEAD_BYTES, sniff_kind
from ..jobs import Job, JobDraft, LimitExceeded, UploadLimits
from ..model import DocumentKind
from ..people import Viewer
from ..store import DocumentReader, Jobs
from .lifecycle import uploads_dir

__all__ = [
    "MAX_FILES",
    "ReceivedFile",
    "UploadResult",
    "Uploadable",
    "discard",
    "incoming_dir",
    "parse_visibility",
    "place",
    "queue_uploads",
    "receive_path",
    "remove_received",
]

#: Files one upload may carry.
MAX_FILES = 20

Visibility = Literal["private", "shared"]


@dataclass(slots=True, kw_only=True)
class ReceivedFile:
    """One received file, written to ``temp``: its hash, size and the kind its first bytes
    say (None: neither PDF nor EPUB). ``filename`` is the sender's, for display only."""

    filename: str
    temp: Path
    sha256: str
    size: int
    kind: DocumentKind | None


@dataclass(frozen=True, slots=True)
class UploadResult:
    """The jobs an upload queued, in the order of its files, and the limit that stopped it
    (None: every file became a job)."""

    jobs: tuple[Job, ...]
    refused: LimitExceeded | None = None


def incoming_dir(data_dir: Path) -> Path:
    """Where files are received before they are placed (created when missing)."""
    incoming = uploads_dir(data_dir) / ".incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    return incoming


def receive_path(path: Path, data_dir: Path) -> ReceivedFile:
    """A file on disk received as an upload: copied into the incoming folder and hashed."""
    fd, name = tempfile.mkstemp(dir=incoming_dir(data_dir), suffix=".part")
    digest, size, head = hashlib.sha256(), 0, b""
    with os.fdopen(fd, "wb") as out, path.open("rb") as source:
        while chunk := source.read(1 << 20):
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return ReceivedFile(
        filename=path.name,
        temp=Path(name),
        sha256=digest.hexdigest(),
        size=size,
        kind=sniff_kind(head),
    )


def place(data_dir: Path, received: ReceivedFile) -> tuple[str, bool]:
    """Move a received PDF or EPUB to its content-addressed place; (its path relative to the
    data folder, whether this call put it there). The same bytes land on the same name."""
    assert received.kind is not None
    relative = Path("uploads") / received.sha256[:2] / f"{received.sha256}.{received.kind}"
    target = data_dir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        received.temp.unlink(missing_ok=True)
        return relative.as_posix(), False
    os.replace(received.temp, target)  # atomic: a reader sees no file or the whole file
    return relative.as_posix(), True


def discard(data_dir: Path, relative: str) -> None:
    """Remove an uploaded file (only ever under ``<data>/uploads/``)."""
    root = uploads_dir(data_dir).resolve()
    path = (data_dir / relative).resolve()
    if root in path.parents:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def parse_visibility(value: str | None) -> Visibility | None:
    """An upload's visibility field: private, shared, or None (empty or missing)."""
    if not value:
        return None
    if value == "private":
        return "private"
    if value == "shared":
        return "shared"
    raise InvalidInput("visibility must be private or shared")


class Uploadable(DocumentReader, Jobs, Protocol):
    """What queueing uploads reads and writes: the job queue, and whether a document has the
    bytes already (a refused file's placed copy stays then)."""


def _unsupported(store: Jobs, viewer: Viewer, received: ReceivedFile, now: float) -> Job:
    received.temp.unlink(missing_ok=True)
    return store.add_job(
        JobDraft(
            owner=viewer.user_id,
            filename=received.filename,
            file="",
            sha256=received.sha256,
            size=received.size,
            state="failed",
            reason="unsupported",
            message=f"{received.filename} is neither a PDF nor an EPUB (by its content)",
        ),
        now,
        UploadLimits(),
    )


def _queue_one(
    store: Uploadable,
    viewer: Viewer,
    received: ReceivedFile,
    *,
    data_dir: Path,
    visibility: Visibility | None,
    limits: UploadLimits,
    max_attempts: int,
) -> Job:
    """One received file as a job: a failed one for a file that is neither PDF nor EPUB, else
    a queued one (the file placed by its hash first; removed again when a limit refuses it and
    nothing else uses it)."""
    now = time.time()
    if received.kind is None:
        return _unsupported(store, viewer, received, now)
    relative, placed = place(data_dir, received)
    draft = JobDraft(
        owner=viewer.user_id,
        filename=received.filename,
        file=relative,
        sha256=received.sha256,
        size=received.size,
        visibility=visibility,
        max_attempts=max_attempts,
    )
    try:
        return store.add_job(draft, now, limits)
    except LimitExceeded:
        if placed and not store.has_document(received.sha256):
            discard(data_dir, relative)
        raise


def queue_uploads(
    store: Uploadable,
    viewer: Viewer,
    files: Sequence[ReceivedFile],
    *,
    data_dir: Path,
    visibility: Visibility | None,
    limits: UploadLimits,
    max_attempts: int,
) -> UploadResult:
    """Each received file as a job, in order, until a limit refuses one (module docstring);
    every received file is placed or removed when this returns."""
    queued: list[Job] = []
    for index, received in enumerate(files):
        try:
            job = _queue_one(
                store,
                viewer,
                received,
                data_dir=data_dir,
                visibility=visibility,
                limits=limits,
                max_attempts=max_attempts,
            )
        except LimitExceeded as exc:
            for rest in files[index:]:
                rest.temp.unlink(missing_ok=True)
            return UploadResult(tuple(queued), exc)
        queued.append(job)
    return UploadResult(tuple(queued))


def remove_received(files: Sequence[ReceivedFile]) -> None:
    """Remove received files that will not be queued (a refused request)."""
    for received in files:
        received.temp.unlink(missing_ok=True)
