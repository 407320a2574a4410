"""Keep the answers that were shown, so that ``truthbase verify`` can re-check them later."""

from __future__ import annotations

from ..store.base import AnswerLog
from .model import Answer

__all__ = ["record_answer"]


def record_answer(store: object, answer: Answer) -> int | None:
    """Keep ``answer`` in ``store``'s answer log when the store has one (the SQLite store does);
    sets ``answer.id`` and returns it (None: this store keeps no answers)."""
    if not isinstance(store, AnswerLog):
        return None
    answer.id = store.add_answer(answer.question, answer.to_json())
    return answer.id
