"""Query rewriting: an ambiguous or multi-part question becomes at most 3 sub-queries.

It fails open: on a provider error, a timeout or output that does not parse into usable
sub-queries, the question stands alone. The caller searches each sub-query and fuses the ranked
lists with :func:`fuse_subqueries` (reciprocal rank fusion, the same as the hybrid arms). Keeping
the whole question's own list among the fused lists is wise: a sub-query can miss.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..retrieve.fusion import weighted_rrf
from ..text.vocabulary import QUERY_STOP_WORDS, WORD, stem
from .client import ChatModel, LLMTimeout
from .parse import loads_loose, strip_fences
from .prompts import build_rewrite_messages

__all__ = [
    "MAX_SUBQUERIES",
    "RewriteOutcome",
    "fuse_subqueries",
    "parse_subqueries",
    "rewrite",
    "rewrite_query",
]

log = logging.getLogger(__name__)

MAX_SUBQUERIES = 3
MAX_QUERY_CHARS = 300
MAX_QUERY_WORDS = 20  # a search query, not the model's prose

K = TypeVar("K", bound=Hashable)

_LIST_KEYS = ("queries", "sub_queries", "subqueries", "questions", "query")
_ITEM = re.compile(r"^\s*(?:\d{1,2}\s*[.):]|[-*•])\s+(.+?)\s*$")


@dataclass(frozen=True, slots=True)
class RewriteOutcome:
    """The queries to search; ``rewritten`` is False when the question stands alone."""

    queries: list[str]
    rewritten: bool
    reason: str | None = None  # why the question stands: "timeout", "error: ...", ...
    seconds: float = 0.0


def rewrite(
    model: ChatModel, question: str, timeout: float, *, max_queries: int = MAX_SUBQUERIES
) -> RewriteOutcome:
    """Ask ``model`` to split ``question``; never raises, never returns more than max_queries."""
    max_queries = max(1, min(max_queries, MAX_SUBQUERIES))
    started = time.perf_counter()

    def stands(reason: str) -> RewriteOutcome:
        log.info("query rewrite failed open (%s)", reason)
        return RewriteOutcome([question], False, reason, time.perf_counter() - started)

    try:
        text = model.complete(build_rewrite_messages(question), timeout)
    except Exception as exc:  # fail open on anything, the stage is optional
        kind = "timeout" if isinstance(exc, LLMTimeout) else "error"
        return stands(f"{kind}: {exc}")
    queries = parse_subqueries(text, question, max_queries=max_queries)
    if queries is None:
        return stands(f"unparseable output: {text[:120]!r}")
    seconds = time.perf_counter() - started
    if [_key(q) for q in queries] == [_key(question)]:
        return RewriteOutcome([question], False, "kept", seconds)
    return RewriteOutcome(queries, True, None, seconds)


def rewrite_query(model: ChatModel, question: str, timeout: float) -> list[str]:
    """The sub-queries of ``question`` (1 to 3), or ``[question]`` on any failure."""
    return rewrite(model, question, timeout).queries


def parse_subqueries(
    text: str, question: str, *, max_queries: int = MAX_SUBQUERIES
) -> list[str] | None:
    """Sub-queries from a model's reply, or None when none can be read.

    Reads ``{"queries": [...]}`` or a bare JSON list, else a numbered or bulleted list, else
    lines that end with "?". Keeps queries that share a content word with the question (a model
    that drifts off topic is not followed), drops headings (ending in ":"), items over 20 words and
    duplicates, and keeps the first ``max_queries``.
    """
    items = _json_items(text)
    if items is None:
        items = _line_items(text)
    topic = _stems(question)
    kept: list[str] = []
    seen: set[str] = set()
    for item in items:
        query = " ".join(item.replace("**", "").strip().strip("\"'`").split())
        too_long = len(query) > MAX_QUERY_CHARS or len(query.split()) > MAX_QUERY_WORDS
        if not query or too_long or _key(query) in seen:
            continue
        if query.endswith(":"):  # a heading of the model's prose, not a query
            continue
        if topic and not topic & _stems(query):
            continue
        seen.add(_key(query))
        kept.append(query)
        if len(kept) == max_queries:
            break
    return kept or None


def _json_items(text: str) -> list[str] | None:
    value = loads_loose(text)
    if isinstance(value, dict):
        lists = [value[k] for k in _LIST_KEYS if k in value]
        if not lists:
            lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if lists else None
        if isinstance(value, str):
            value = [value]
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str)]


def _line_items(text: str) -> list[str]:
    lines = strip_fences(text).splitlines()
    items = [m.group(1) for m in map(_ITEM.match, lines) if m]
    if items:
        return items
    return [line for line in lines if line.strip().endswith("?")]


def _stems(text: str) -> set[str]:
    """The topic words of ``text``, stemmed: words of three or more letters, no stop words."""
    return {
        stem(w) for w in WORD.findall(text.lower()) if len(w) >= 3 and w not in QUERY_STOP_WORDS
    }


def _key(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?. ")


def fuse_subqueries(
    rankings: Sequence[Sequence[K]], k: float = 60.0, *, limit: int | None = None
) -> list[K]:
    """One ranking from the sub-queries' rankings by reciprocal rank fusion (equal weights).

    ``k`` is the RRF constant (``retrieval.rrf_k``); ``limit`` cuts the result. Ties go to the
    best single rank, then to the first list (see :func:`truthbase.retrieve.fusion.weighted_rrf`).
    """
    arms = {f"q{i}": list(ranking) for i, ranking in enumerate(rankings)}
    fused = [item for item, _, _ in weighted_rrf(arms, dict.fromkeys(arms, 1.0), k)]
    return fused if limit is None else fused[:limit]
