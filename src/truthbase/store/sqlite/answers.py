"""The answer log in SQLite: the ``answers`` table (schema 4)."""

from __future__ import annotations

from typing import Any

from ...records import StoredAnswer
from ..codec import answer_row, stored_answer
from .connection import Database

__all__ = ["add_answer", "answers"]


def add_answer(db: Database, question: str, answer: dict[str, Any]) -> int:
    """Keep an answer as it was shown; returns its id."""
    with db.transaction() as conn:
        cursor = conn.execute(
            "INSERT INTO answers(question, answer, created_at) VALUES (?, ?, ?)",
            answer_row(question, answer),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid


def answers(db: Database) -> list[StoredAnswer]:
    """Every stored answer, oldest first."""
    with db.lock:
        rows = db.conn.execute(
            "SELECT id, question, answer, created_at FROM answers ORDER BY id"
        ).fetchall()
    return [stored_answer(r) for r in rows]
