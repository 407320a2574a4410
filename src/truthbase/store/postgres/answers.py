"""The answer log in PostgreSQL: ``truthbase.answers`` (migration 2)."""

from __future__ import annotations

from typing import Any

from ...records import StoredAnswer
from ..codec import answer_row, stored_answer
from .pool import Pool

__all__ = ["add_answer", "answers"]


def add_answer(pool: Pool, question: str, answer: dict[str, Any]) -> int:
    """Keep an answer as it was shown; returns its id."""
    with pool.connection() as conn:
        row = conn.execute(
            "INSERT INTO truthbase.answers(question, answer, created_at) "
            "VALUES (%s, %s, %s) RETURNING id",
            answer_row(question, answer),
        ).fetchone()
    return int(row[0])


def answers(pool: Pool) -> list[StoredAnswer]:
    """Every stored answer, oldest first."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT id, question, answer, created_at FROM truthbase.answers ORDER BY id"
        ).fetchall()
    return [stored_answer(r) for r in rows]
