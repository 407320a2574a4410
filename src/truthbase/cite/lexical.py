"""Lexical support: stemmed content terms, idf over a handful of passages, weighted overlap.

Small and deterministic on purpose: the extractive answerer scores sentences with it, and the
citation aligner uses it to find the source sentence that supports a claim.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from ..textmatch import normalize

# fmt: off
STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not of off on once only or other our out over own same she should so some such than that
the their them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours according say says said
per used use using via within upon whether two one
""".split()  # noqa: SIM905
)
# fmt: on

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def stem(word: str) -> str:
    """A light suffix stripper: plural and a few inflections, enough to match 'risks' to 'risk'."""
    w = word
    if len(w) <= 3 or w.isdigit():
        return w
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)] + repl
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def terms(text: str) -> list[str]:
    """Stemmed content terms of ``text`` (normalized by the matching rule first), in order."""
    return [stem(t) for t in _TOKEN.findall(normalize(text)) if t not in STOPWORDS]


def idf_table(passages: Iterable[Sequence[str]]) -> tuple[dict[str, float], float]:
    """Smoothed idf per term over ``passages`` (term lists), and the idf of an unseen term."""
    df: dict[str, int] = {}
    n = 0
    for passage in passages:
        n += 1
        for term in set(passage):
            df[term] = df.get(term, 0) + 1
    table = {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    unseen = math.log(1.0 + (n + 0.5) / 0.5)
    return table, unseen


def weighted_coverage(
    query: Iterable[str], passage: Iterable[str], idf: Mapping[str, float], unseen: float
) -> float:
    """Share of the query's idf mass whose terms occur in the passage (0 for no query)."""
    wanted = set(query)
    if not wanted:
        return 0.0
    have = set(passage)
    total = sum(idf.get(t, unseen) for t in wanted)
    found = sum(idf.get(t, unseen) for t in wanted & have)
    return found / total if total > 0 else 0.0


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)
