"""Listwise LLM rerank of the fused top candidates; the fused order stands on any failure.

The model sees the fused top ``window`` (15) passages, numbered 1..n, and answers an order of
numbers. Its first ``head`` (4) valid numbers go in front; the fused order fills up to ``keep``
(8). Numbers out of range, duplicates and non-numbers are ignored. A provider error, a timeout,
or output without a single valid number leaves the fused order as it was.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .budget import message_tokens, room_chars, window_of
from .client import ChatModel, LLMTimeout
from .parse import loads_loose, strip_fences
from .prompts import build_rerank_messages

__all__ = ["RerankOutcome", "merge_order", "parse_order", "rerank", "rerank_outcome"]

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)

WINDOW = 15
HEAD = 4
KEEP = 8

_ORDER_KEYS = ("order", "ranking", "ranked", "ids", "passages", "result")
_NUMBERS_ONLY = re.compile(r"^[\s\d\[\](),;:>#.]+$")
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class RerankOutcome(Generic[K]):
    """The new order; ``reranked`` is False when the fused order stands."""

    ids: list[K]
    reranked: bool
    model_order: list[K]  # the valid ids the model ranked, in its order
    reason: str | None = None  # why the fused order stands
    seconds: float = 0.0


def rerank_outcome(
    model: ChatModel,
    question: str,
    candidates: Sequence[tuple[K, str]],
    timeout: float,
    *,
    window: int = WINDOW,
    head: int = HEAD,
    keep: int = KEEP,
    max_chars: int,
) -> RerankOutcome[K]:
    """Rerank ``candidates`` (``(id, text)`` in fused order, best first); never raises.

    Each passage is shown cut to ``max_chars`` (the setting ``llm.rerank_chars``), less where
    the model's context window has no room for ``window`` passages of that size. Returns at
    most ``keep`` ids, each a candidate's id, no duplicates.
    """
    started = time.perf_counter()
    fused = _unique([cid for cid, _ in candidates])
    shown = _unique_pairs(candidates)[:window]

    def stands(reason: str) -> RerankOutcome[K]:
        log.info("rerank failed open (%s)", reason)
        return RerankOutcome(fused[:keep], False, [], reason, time.perf_counter() - started)

    if len(shown) < 2:
        return stands("nothing to reorder")
    fitted = window_of(model)
    if fitted is not None:
        used = message_tokens(build_rerank_messages(question, [], max_chars=max_chars))
        room = room_chars(fitted[0], fitted[1], used)
        max_chars = max(50, min(max_chars, room // len(shown) - 40))
    messages = build_rerank_messages(question, [text for _, text in shown], max_chars=max_chars)
    try:
        text = model.complete(messages, timeout)
    except Exception as exc:  # fail open on anything, the stage is optional
        kind = "timeout" if isinstance(exc, LLMTimeout) else "error"
        return stands(f"{kind}: {exc}")
    labels = parse_order(text, len(shown))
    if not labels:
        return stands(f"unparseable output: {text[:120]!r}")
    order = [shown[label - 1][0] for label in labels]
    ids = merge_order(fused, order, head=head, keep=keep)
    return RerankOutcome(ids, True, order, None, time.perf_counter() - started)


def rerank(
    model: ChatModel,
    question: str,
    candidates: Sequence[tuple[K, str]],
    timeout: float,
    *,
    max_chars: int,
) -> list[K]:
    """The reranked ids (at most 8): the model's first 4, then the fused order."""
    return rerank_outcome(model, question, candidates, timeout, max_chars=max_chars).ids


def parse_order(text: str, n: int) -> list[int] | None:
    """Passage numbers 1..n from the model's reply, in its order, without duplicates.

    Reads a reply made of numbers and separators only ("[3] > [1] > [2]", "3, 1, 2"), else
    ``{"order": [...]}`` or a bare JSON list (numbers, numeric strings like "[3]" or objects
    with an "n" or "id"). None when the reply is none of these; an empty list when it names no
    valid number.
    """
    bare = strip_fences(text)
    value = loads_loose(text)
    numbers: list[int | None]
    if bare and _NUMBERS_ONLY.match(bare):  # "[3] > [1] > [2]", "3, 1, 2", "[3, 1, 2]"
        numbers = [int(m) for m in _NUMBER.findall(bare)]
    elif isinstance(value, dict | list):
        if isinstance(value, dict):
            lists = [value[k] for k in _ORDER_KEYS if isinstance(value.get(k), list)]
            lists = lists or [v for v in value.values() if isinstance(v, list)]
            value = lists[0] if lists else []
        numbers = [_number(item) for item in value]
    else:
        return None
    valid: list[int] = []
    for number in numbers:
        if number is not None and 1 <= number <= n and number not in valid:
            valid.append(number)
    return valid


def _number(item: Any) -> int | None:
    if isinstance(item, dict):
        item = item.get("n", item.get("id"))
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, float) and item.is_integer():
        return int(item)
    if isinstance(item, str):
        match = re.fullmatch(r"\s*\[?\s*(?:passage\s*)?#?(\d+)\s*\]?\s*", item, re.IGNORECASE)
        if match:
            return int(match.group(1))
    return None


def merge_order(fused: Sequence[K], model_order: Sequence[K], *, head: int, keep: int) -> list[K]:
    """``model_order``'s first ``head`` ids found in ``fused``, then ``fused``; ``keep`` at most."""
    known = set(fused)
    front = _unique([cid for cid in model_order if cid in known])[:head]
    taken = set(front)
    return (front + [cid for cid in fused if cid not in taken])[:keep]


def _unique(items: Sequence[K]) -> list[K]:
    return list(dict.fromkeys(items))


def _unique_pairs(pairs: Sequence[tuple[K, str]]) -> list[tuple[K, str]]:
    seen: set[K] = set()
    out: list[tuple[K, str]] = []
    for cid, text in pairs:
        if cid not in seen:
            seen.add(cid)
            out.append((cid, text))
    return out
