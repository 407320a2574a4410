"""The SQL both backends share, written once over a small :class:`~.dialect.Dialect`.

One module per concept, each a class of methods over ``self._sql`` (the backend's dialect):
:mod:`.documents` (the reads of documents, units and chunks; owner and visibility),
:mod:`.library` (holders, screen verdicts), :mod:`.jobs` (the queue and its upload limits),
:mod:`.accounts` (users, sessions, API tokens), :mod:`.collections` (the collections users
keep), :mod:`.answers` (the answer log and the segment index), :mod:`.feedback` (reports on
answers), :mod:`.threads` (saved threads), :mod:`.shares` (their read-only links) and
:mod:`.tokens` (token signs).
:class:`SharedRows` combines them; a backend's store (:class:`~truthbase.store.sqlite.SQLiteStore`,
:class:`~truthbase.store.postgres.PostgresStore`) adds what really differs: the connection, the
schema and its migrations, the write of a document, delete and rename (the full text), the two
search arms and the quota counters.
"""

from __future__ import annotations

from .accounts import AccountRows
from .answers import AnswerRows, SegmentRows
from .collections import CollectionRows
from .dialect import Connection, Cursor, Dialect, batches
from .documents import DocumentRows, index_embedder
from .feedback import FeedbackRows
from .holdings import HoldingRows, holders_of, restore_holders, write_screen
from .jobs import JobRows, check_limits
from .shares import ShareRows
from .threads import ThreadRows
from .tokens import TokenRows

__all__ = [
    "AccountRows",
    "AnswerRows",
    "CollectionRows",
    "Connection",
    "Cursor",
    "Dialect",
    "DocumentRows",
    "FeedbackRows",
    "HoldingRows",
    "JobRows",
    "SegmentRows",
    "ShareRows",
    "SharedRows",
    "ThreadRows",
    "TokenRows",
    "batches",
    "check_limits",
    "holders_of",
    "index_embedder",
    "restore_holders",
    "write_screen",
]


class SharedRows(
    DocumentRows,
    HoldingRows,
    JobRows,
    AccountRows,
    AnswerRows,
    FeedbackRows,
    CollectionRows,
    ThreadRows,
    ShareRows,
    SegmentRows,
    TokenRows,
):
    """Every method both backends share, over the backend's dialect (``_sql``)."""
