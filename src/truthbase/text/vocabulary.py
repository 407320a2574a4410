"""The text vocabulary every stage shares: words, stop words, stemming, idf, term overlap.

One module, so that "what is a word", "which words carry no meaning" and "how rare is a term"
have one answer each. Pure and deterministic.

- Words are runs of letters and digits (:data:`WORD`, close to FTS5's ``unicode61`` token
  characters).
- :data:`STOP_WORDS` is the English function-word list; two purposes add to it:
  :data:`QUERY_STOP_WORDS` (what a question is phrased in, never a search term: the full-text
  query, pseudo-relevance feedback, the rewrite's topic check) and :data:`SUPPORT_STOP_WORDS`
  (reporting and counting words that are no evidence that a sentence supports a claim: the
  extractive answerer, the citation aligner, segment summaries and book-tool budgeting). The
  additions were fitted with the retrieval and answer evals; changing a list moves their
  numbers (docs/evals/).
- :func:`stem` is a light English suffix stripper ("risks" -> "risk").
- idf variants are plain functions chosen by name (:func:`idf_bm25`, :func:`idf_log1p`,
  :func:`idf_smoothed`); :func:`idf_table` tabulates the BM25 one over a handful of passages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from .matching import normalize

__all__ = [
    "QUERY_STOP_WORDS",
    "STOP_WORDS",
    "SUPPORT_STOP_WORDS",
    "WORD",
    "idf_bm25",
    "idf_log1p",
    "idf_smoothed",
    "idf_table",
    "jaccard",
    "stem",
    "terms",
    "weighted_coverage",
    "words",
]

#: A word: a run of letters and digits (no underscore).
WORD = re.compile(r"[^\W_]+")

# fmt: off
#: English function words (pronouns, articles, auxiliaries, prepositions, conjunctions).
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not of off on once only or other our out over own same she should so
    some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    yours via within upon according
    """.split()  # noqa: SIM905
)

#: Stop words of a question: the function words, the words questions are phrased in
#: ("describe", "explain", "please"), and the fragments of English contractions.
QUERY_STOP_WORDS: frozenset[str] = STOP_WORDS | frozenset(
    """
    done herself himself myself ours ourselves theirs themselves whose yourself yourselves
    may might must shall us without among describe explain tell please etc eg ie vs
    s t d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn
    shan shouldn wasn weren won wouldn don
    """.split()  # noqa: SIM905
)

#: Stop words of support scoring: the function words plus reporting verbs and counting words
#: that occur around any claim ("says", "using", "two").
SUPPORT_STOP_WORDS: frozenset[str] = STOP_WORDS | frozenset(
    "say says said per used use using whether two one".split()  # noqa: SIM905
)
# fmt: on


def words(text: str) -> list[str]:
    """The words of ``text`` as written, in order."""
    return WORD.findall(text)


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


#: Han, kana and hangul: scripts written without spaces between words.
_CJK = re.compile(
    "[\u3040-\u30ff\u3100-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]+"
)


def _pieces(word: str) -> list[str]:
    """``word`` itself, or, for a run of CJK characters (no spaces mark its words), its
    character bigrams (one character alone stays a term), around the other letters in it."""
    if not _CJK.search(word):
        return [word]
    out: list[str] = []
    at = 0
    for run in _CJK.finditer(word):
        if run.start() > at:
            out.append(word[at : run.start()])
        chars = run.group()
        out.extend(
            [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        )
        at = run.end()
    if at < len(word):
        out.append(word[at:])
    return out


def terms(text: str) -> list[str]:
    """Stemmed content terms of ``text`` (normalized by the matching rule first), in order; a
    CJK run gives its character bigrams (as the full-text index does,
    :mod:`truthbase.text.fulltext`)."""
    return [
        stem(piece)
        for t in WORD.findall(normalize(text))
        if t not in SUPPORT_STOP_WORDS
        for piece in _pieces(t)
    ]


# -- idf ------------------------------------------------------------------------------------


def idf_bm25(n: int, df: int) -> float:
    """BM25's idf, smoothed to stay positive: ``log(1 + (n - df + 0.5) / (df + 0.5))``."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def idf_log1p(n: int, df: int) -> float:
    """``log(1 + n / df)``: positive for every term that occurs (``df >= 1``)."""
    return math.log(1.0 + n / df)


def idf_smoothed(n: int, df: int) -> float:
    """``log((n + 1) / df)``: zero for a term in every one of ``n + 1`` texts."""
    return math.log((n + 1) / df)


def idf_table(passages: Iterable[Sequence[str]]) -> tuple[dict[str, float], float]:
    """:func:`idf_bm25` per term over ``passages`` (term lists), and the idf of an unseen term."""
    df: dict[str, int] = {}
    n = 0
    for passage in passages:
        n += 1
        for term in set(passage):
            df[term] = df.get(term, 0) + 1
    table = {t: idf_bm25(n, d) for t, d in df.items()}
    return table, idf_bm25(n, 0)


# -- overlap --------------------------------------------------------------------------------


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
    """Shared terms over all terms of ``a`` and ``b`` (0 when either is empty)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)
