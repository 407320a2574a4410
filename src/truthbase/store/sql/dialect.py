"""What the shared SQL needs of a backend: a connection to read on, a transaction to write in,
and the few pieces of SQL that the two databases spell differently.

The shared modules of :mod:`truthbase.store.sql` write their statements once, in the SQL both
SQLite (3.35 or later: ``RETURNING``, ``ON CONFLICT``, ``IS NOT DISTINCT FROM``) and PostgreSQL
read, with ``?`` placeholders and unqualified table names (PostgreSQL's connections put the
``truthbase`` schema first on the search path). A backend's :class:`Dialect` turns ``?`` into
its own placeholder and adds what only it has: PostgreSQL's advisory locks and
``FOR UPDATE SKIP LOCKED``, SQLite's limit on bound parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

__all__ = ["Connection", "Cursor", "Dialect", "batches"]


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A connection that takes ``?`` placeholders (a read, or a write's transaction)."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


class Dialect(Protocol):
    """One backend as the shared SQL sees it."""

    #: Raised by a write that breaks a unique constraint.
    integrity_error: type[Exception]
    #: Appended to a ``SELECT ... LIMIT n`` that picks rows to update, so that concurrent
    #: claims pass over each other's rows ('' where the writer lock serializes them).
    skip_locked: str
    #: Appended to an ORDER BY of text, so that both backends sort by bytes.
    byte_order: str
    #: Most ids bound in one ``IN (...)`` (:func:`batches`).
    max_ids: int
    #: A chunk's text as SQL, the chunk as ``c`` and its unit as ``u`` (joined on the chunk's
    #: document and unit): SQLite keeps it once, in the unit (its span ``start:end``).
    chunk_text: str

    def read(self) -> AbstractContextManager[Connection]:
        """A connection to read on (its reads see one committed state each)."""
        ...

    def write(self) -> AbstractContextManager[Connection]:
        """A transaction: committed when the block ends, rolled back on any exception."""
        ...

    def lock_documents(self, conn: Connection) -> None:
        """Serialize this transaction with every document write (add, delete, rename)."""
        ...

    def lock_owner(self, conn: Connection, owner: str | None) -> None:
        """Serialize this transaction with the other uploads of ``owner`` (its limits)."""
        ...

    def ids_in(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        """``column`` among ``ids`` (at most :attr:`max_ids` of them) as SQL and its
        parameters."""
        ...

    def group_concat(self, expression: str) -> str:
        """The aggregate that joins ``expression``'s values with U+001F (the unit separator
        :func:`~truthbase.store.codec.document_info` splits on)."""
        ...


def batches(dialect: Dialect, ids: Iterable[int]) -> Iterator[list[int]]:
    """``ids`` (as ints, each once, ascending) in runs of at most ``dialect.max_ids``."""
    ordered = sorted({int(i) for i in ids})
    for first in range(0, len(ordered), dialect.max_ids):
        yield ordered[first : first + dialect.max_ids]
