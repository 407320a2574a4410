"""Pseudo-relevance feedback for the full-text arm: expansion words from the first pass's top.

A paraphrased question shares few words with its passage ("made-up content" for "hallucination",
"worked examples" for "few-shot demonstrations"), so BM25 over the question's own terms ranks it
deep. The chunks that the first (fused) pass ranks highest are usually on the right topic even
when they are not the passage, and they speak the document's vocabulary. RM3-style feedback takes
the words that weigh most in those top chunks and sends them, OR-ed with the question's own terms,
as a second full-text query whose ranked list joins the fusion with its own (lower) weight.

The weight of a candidate word w, over the feedback chunks d_1..d_m (best first):

    weight(w) = sum_i  tf(w, d_i) / len(d_i) * 1 / i  *  log((P + 1) / df_pool(w))

where ``df_pool`` counts the chunks of the *candidate pool* (the union of both arms' candidate
lists, already loaded) that hold w and P is the pool's size. A word in more than
``max_pool_df`` of the pool is the topic itself ("risk" in a risk framework), not a bridge, and is
left out; so are the question's own words, stop words, numbers and words of two letters or less.
The pool stands in for corpus statistics: it needs no extra index or query, and it measures
"common near this question", which is what separates a bridge word from the topic's vocabulary.

Pure: texts in, terms out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from ..text.vocabulary import QUERY_STOP_WORDS, WORD, idf_smoothed
from .fts_query import word_terms

__all__ = ["expansion_terms", "feedback_query", "feedback_words"]

_MIN_LEN = 3


def feedback_words(text: str) -> list[str]:
    """The case-folded words of ``text`` that may serve as expansion terms, in text order."""
    return _usable(_words(text))


@lru_cache(maxsize=2048)
def _words(text: str) -> tuple[str, ...]:
    """The case-folded words of a chunk's text, split once per text: the same chunks come back
    as candidates question after question, and splitting them was a fifth of a search."""
    return tuple(WORD.findall(text.casefold()))


def _usable(words: Sequence[str]) -> list[str]:
    return [
        w for w in words if len(w) >= _MIN_LEN and not w.isdigit() and w not in QUERY_STOP_WORDS
    ]


def expansion_terms(
    question: str,
    feedback: Sequence[str],
    pool: Sequence[str],
    *,
    terms: int,
    max_pool_df: float,
) -> list[str]:
    """Up to ``terms`` expansion words from the ``feedback`` texts (best first), heaviest first.

    ``pool`` holds the texts that document frequencies are counted over (it should include the
    feedback texts). Ties are broken alphabetically, so the result is deterministic.
    """
    if terms < 0:
        raise ValueError(f"terms must be >= 0, not {terms}")
    if not 0 < max_pool_df <= 1:
        raise ValueError(f"max_pool_df must be in (0, 1], not {max_pool_df}")
    if terms == 0 or not feedback or not pool:
        return []
    own = set(feedback_words(question))
    counted = [Counter(_usable(_words(text))) for text in feedback]
    candidates = set().union(*counted) - own
    df: Counter[str] = Counter()
    for text in pool:  # only the candidates' frequencies: no filtering of every pool word
        df.update(candidates.intersection(_words(text)))
    size = len(pool)
    weights: dict[str, float] = {}
    for rank, counts in enumerate(counted, start=1):
        length = sum(counts.values())
        for word, count in counts.items():
            if word in own:
                continue
            freq = max(df[word], 1)  # a feedback text missing from the pool still counts once
            if freq / size > max_pool_df:
                continue
            idf = idf_smoothed(size, freq)
            weights[word] = weights.get(word, 0.0) + count / length / rank * idf
    ranked = sorted(weights.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, weight in ranked[:terms] if weight > 0]


def feedback_query(
    fts_query: str, words: Sequence[str], languages: Sequence[str | None] = ("en",)
) -> str:
    """The question's FTS5 expression OR-ed with the expansion ``words``, each made into its
    index terms in each of ``languages`` (:func:`.fts_query.word_terms`; each an FTS5 string).

    A word whose term the expression already has (a question word in another inflection) is
    added all the same: BM25 counts the term once more, as it did when FTS5 stemmed the words
    itself, and the feedback weights were tuned so. Words come from :func:`feedback_words`
    (word characters only), and are quoted all the same, so the expression stays safe for the
    FTS5 parser.
    """
    extra = [term for word in words for term in word_terms([word], languages)]
    return " OR ".join([fts_query, *extra]) if extra else fts_query
