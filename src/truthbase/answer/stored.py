"""Keep the answers that were shown, so that ``truthbase verify`` can re-check them later."""

from __future__ import annotations

from ..store.base import AnswerLog
from .model import Answer

__all__ = ["record_answer"]


def record_answer(store: AnswerLog, answer: Answer, asked_by: str | None = None) -> int:
    """Keep ``answer`` in ``store``'s answer log (every store has one), with its user's id
    (``asked_by``; None: the operator or the local user); sets ``answer.id`` and returns it."""
    answer.id = store.add_answer(answer.question, answer.to_json(), asked_by)
    return answer.id
