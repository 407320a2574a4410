"""Saved threads, written once for both backends: the ``threads`` and ``thread_turns`` tables.

Who may read or change which thread is the application's (:mod:`truthbase.app.threads`); these
methods read and write what they are asked, by owner or by thread id. A thread's answers are kept
as the JSON text they were shown as (so they read back exactly as written), beside the answer
log's copy (``truthbase verify`` reads that one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ...turns import StoredTurn, ThreadCount, ThreadInfo, search_terms
from .dialect import Dialect

__all__ = ["ThreadRows"]

_THREAD_COLUMNS = (
    "th.id, th.owner, th.title, th.created_at, th.updated_at, "
    "(SELECT count(*) FROM thread_turns t WHERE t.thread_id = th.id)"
)


def _now() -> str:
    # Microseconds, so that two turns within one second still list newest first.
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _thread(row: Sequence[Any]) -> ThreadInfo:
    return ThreadInfo(
        id=str(row[0]),
        owner=row[1],
        title=str(row[2]),
        created_at=str(row[3]),
        updated_at=str(row[4]),
        turns=int(row[5]),
    )


def _turn(row: Sequence[Any]) -> StoredTurn:
    answer = json.loads(row[2])
    return StoredTurn(
        idx=int(row[0]),
        question=str(row[1]),
        answer=answer if isinstance(answer, dict) else {},
        answer_id=int(row[3]) if row[3] is not None else None,
        resolution=json.loads(row[4]) if row[4] is not None else None,
        created_at=str(row[5]),
    )


class ThreadRows:
    """:class:`~truthbase.store.base.ThreadLog` over :attr:`_sql`."""

    _sql: Dialect

    def add_thread(self, thread_id: str, owner: str | None, title: str) -> ThreadInfo:
        """A new, empty thread of ``owner``'s."""
        at = _now()
        with self._sql.write() as conn:
            conn.execute(
                "INSERT INTO threads(id, owner, title, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (thread_id, owner, title, at, at),
            )
        return ThreadInfo(
            id=thread_id, owner=owner, title=title, created_at=at, updated_at=at, turns=0
        )

    def thread(self, thread_id: str) -> ThreadInfo | None:
        with self._sql.read() as conn:
            row = conn.execute(
                f"SELECT {_THREAD_COLUMNS} FROM threads th WHERE th.id = ?", (thread_id,)
            ).fetchone()
        return _thread(row) if row is not None else None

    def threads(self, owner: str | None, words: Sequence[str] = ()) -> list[ThreadInfo]:
        """``owner``'s threads, newest first; with ``words``, those whose questions and answers
        hold, for every one of them, a word that begins with it (:func:`~truthbase.turns.
        search_terms` cuts both): the page searches as one types, so "embed" finds "embedded"
        while "bed" does not. The match is made here, once for both backends, over the owner's
        turns' texts (not their answer records): a user's threads are few enough to read, and
        SQLite's ``lower``/``LIKE`` fold only ASCII where PostgreSQL's fold all of Unicode."""
        terms = search_terms(" ".join(words))
        with self._sql.read() as conn:
            rows = conn.execute(
                f"SELECT {_THREAD_COLUMNS} FROM threads th WHERE th.owner IS NOT DISTINCT FROM ? "
                "ORDER BY th.updated_at DESC, th.created_at DESC, th.id",
                (owner,),
            ).fetchall()
            texts = (
                conn.execute(
                    "SELECT t.thread_id, t.question, t.answer_text FROM thread_turns t "
                    "JOIN threads th ON th.id = t.thread_id "
                    "WHERE th.owner IS NOT DISTINCT FROM ?",
                    (owner,),
                ).fetchall()
                if terms
                else []
            )
        found = [_thread(r) for r in rows]
        if not terms:
            return found
        missing: dict[str, set[str]] = {t.id: set(terms) for t in found}
        for thread_id, question, answer_text in texts:
            left = missing.get(str(thread_id))
            if left:
                said = search_terms(f"{question}\n{answer_text}")
                left -= {term for term in left if any(w.startswith(term) for w in said)}
        return [t for t in found if not missing[t.id]]

    def thread_turns(self, thread_id: str) -> list[StoredTurn]:
        """The thread's turns in the order asked."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT idx, question, answer, answer_id, resolution, created_at "
                "FROM thread_turns WHERE thread_id = ? ORDER BY idx",
                (thread_id,),
            ).fetchall()
        return [_turn(r) for r in rows]

    def add_turn(
        self,
        thread_id: str,
        question: str,
        answer: dict[str, Any],
        *,
        answer_id: int | None = None,
        resolution: dict[str, Any] | None = None,
    ) -> StoredTurn | None:
        """Append a turn to the thread (None when it is gone); the thread becomes the newest."""
        at = _now()
        text = answer.get("text")
        with self._sql.write() as conn:
            found = conn.execute(
                "UPDATE threads SET updated_at = ? WHERE id = ?", (at, thread_id)
            ).rowcount
            if not found:
                return None
            row = conn.execute(
                "SELECT coalesce(max(idx) + 1, 0) FROM thread_turns WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            idx = int(row[0])
            conn.execute(
                "INSERT INTO thread_turns(thread_id, idx, question, answer_text, answer, "
                "answer_id, resolution, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    idx,
                    question,
                    text if isinstance(text, str) else "",
                    json.dumps(answer, ensure_ascii=False),
                    answer_id,
                    json.dumps(resolution, ensure_ascii=False) if resolution is not None else None,
                    at,
                ),
            )
        return StoredTurn(
            idx=idx,
            question=question,
            answer=answer,
            answer_id=answer_id,
            resolution=resolution,
            created_at=at,
        )

    def rename_thread(self, thread_id: str, title: str) -> bool:
        """False when there is no such thread."""
        with self._sql.write() as conn:
            cur = conn.execute("UPDATE threads SET title = ? WHERE id = ?", (title, thread_id))
            return cur.rowcount > 0

    def delete_thread(self, thread_id: str) -> bool:
        """The thread and its turns (the answer log keeps its answers); False when there is no
        such thread."""
        with self._sql.write() as conn:
            conn.execute("DELETE FROM thread_turns WHERE thread_id = ?", (thread_id,))
            cur = conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))
            return cur.rowcount > 0

    def thread_counts(self) -> list[ThreadCount]:
        """Per owner, how many threads and turns (what an admin is shown)."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT th.owner, count(DISTINCT th.id), count(t.idx) FROM threads th "
                "LEFT JOIN thread_turns t ON t.thread_id = th.id GROUP BY th.owner"
            ).fetchall()
        return [ThreadCount(owner=r[0], threads=int(r[1]), turns=int(r[2])) for r in rows]
