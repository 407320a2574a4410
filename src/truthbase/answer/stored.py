"""Keep the answers that were shown, so that ``truthbase verify`` can re-check them later."""

from __future__ import annotations

from ..store.base import AnswerLog
from .model import Answer

__all__ = ["record_answer"]


def record_answer(store: AnswerLog, answer: Answer) -> int:
    """Keep ``answer`` in ``store``'s answer log (every store has one); sets ``answer.id`` and
    returns it."""
    answer.id = store.add_answer(answer.question, answer.to_json())
    return answer.id
