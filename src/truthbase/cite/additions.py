"""Specifics a claim adds: an example, a ranking, that neither the quote nor its context gives.

Two vetoes of :func:`truthbase.cite.support.check_support` (issue 24, third round) for the
added facts a score lets through because the rest of the claim is the quote's:

- ``example_added``: the claim gives an example ("such as lowering insurance premiums", "for
  instance", "e.g.", "zum Beispiel") and fewer than half of the example's content words are
  said by the quote or its context (as written or as a lemma: a topic's loose relatives,
  "heating" for "energy", do not give an example).
- ``superlative_added``: the claim ranks ("the most harmful", "the least", "am wichtigsten")
  where neither quote nor context has a superlative, and the word it ranks by is not on the
  page ("the most important" restating "critical" is no addition).
- ``opposite_added``: the claim pairs a word of the quote with its opposite ("the primary
  audience ..., with program leaders as a secondary audience") where the page never says that
  opposite or a word of its side: the contrast is the claim's own.
- ``order_added``: the claim puts one thing "before" or "prior to" another where neither quote
  nor context orders anything in time ("before any controls are in place" for "as controls are
  implemented"; "summarize the chunks before a language model embeds them").
- ``comparison_added``: the claim compares ("exceed", "outperform", "precede") where the quote
  compares nothing and the page has no word of that comparison or its relatives: a definition
  read as a threshold ("the probability that its consequences exceed a given magnitude").
"""

from __future__ import annotations

import re

from ..text.vocabulary import QUERY_STOP_WORDS, SUPPORT_STOP_WORDS
from .align import normal, passage_lemmas
from .lexicon import Lexicon
from .model import Reason
from .negation import is_cue
from .roles import page_words
from .vetoes import DIRECTIONAL, opposites, side_of

__all__ = [
    "COMPARING",
    "EXAMPLE_SAID",
    "comparison_reasons",
    "example_reasons",
    "opposite_reasons",
    "superlative_reasons",
]

_EXAMPLE = re.compile(
    r"\b(?:such as|for example|for instance|e\.g\.?|zum beispiel|z\. ?b\.|beispielsweise|"
    r"etwa durch)\s+(?P<example>[^,;:.()]+)"
)
#: Least share of an example's content words the page must say for it not to be added.
EXAMPLE_SAID = 0.5
_SUPERLATIVE = re.compile(
    r"\b(?:the|as the|am|die|der|das)\s+(?:most|least|meisten|wenigsten)\s+(?P<word>[^\W\d_]+)"
)
_PAGE_SUPERLATIVE = frozenset("most least best worst meisten wenigsten".split())  # noqa: SIM905
#: Verbs (lemmas) that compare two things or order them: a relation of their own, not a
#: rewording of a page that compares nothing.
COMPARING = frozenset(
    "exceed outperform surpass beat outscore outdo outstrip precede trail".split()  # noqa: SIM905
)
#: "before" or "prior to" ahead of what it orders ("before any controls are in place"; a
#: clause-final "than before" orders nothing).
_ORDER = re.compile(r"\b(before|prior to)\s+[^\W\d_]")
#: Page words that order things in time: then a claim's order may be the page's, in its words.
_ORDER_WORDS = frozenset(
    """
    before prior after once until then first later earlier precede follow following
    subsequently previously
    """.split()  # noqa: SIM905
)
#: Words with which a quote compares without a comparing verb ("improvements of 2%").
_GAINS = frozenset("improve improvement gain margin over".split())  # noqa: SIM905
_NOT_CONTENT = SUPPORT_STOP_WORDS | QUERY_STOP_WORDS
_WORD = re.compile(r"[^\W_]+(?:[.\-'][^\W_]+)*")


def _ranks(text: str, lexicon: Lexicon) -> bool:
    """``text`` has a superlative: "most", "best", or an adjective in "-est" ("largest")."""
    for word in re.findall(r"[^\W\d_]+", normal(text)):
        if word in _PAGE_SUPERLATIVE:
            return True
        if word.endswith("est") and any(
            lemma != word and word.startswith(lemma[:3]) for lemma in lexicon.lemmas(word)
        ):
            return True
    return False


def example_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """An example of the claim the page does not give (module doc)."""
    found = _EXAMPLE.search(normal(claim))
    if found is None:
        return []
    page = page_words(f"{quote}\n{context}", lexicon)
    words = page.content(found.group("example"))
    if not words:
        return []
    said = sum(page.says(w, lexicon, strict=True) for w in words) / len(words)
    if said >= EXAMPLE_SAID:
        return []
    return [
        Reason(
            "example_added",
            f'the claim gives the example "{found.group("example").strip()}", the quote and '
            "its context do not",
            claim_says=found.group().strip(),
        )
    ]


def superlative_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """A ranking of the claim the page does not make (module doc)."""
    found = _SUPERLATIVE.search(normal(claim))
    if found is None or _ranks(f"{quote}\n{context}", lexicon):
        return []
    page = page_words(f"{quote}\n{context}", lexicon)
    if page.says(found.group("word"), lexicon):
        return []
    return [
        Reason(
            "superlative_added",
            f'the claim ranks ("{found.group().strip()}"), the quote and its context do not',
            claim_says=found.group().strip(),
        )
    ]


def _lemmas(text: str, lexicon: Lexicon) -> set[str]:
    return passage_lemmas(_WORD.findall(normal(text)), lexicon)


def opposite_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """A claim word whose opposite the quote and the claim both say, and that the page never
    says nor anything on its side (module doc)."""
    page = _lemmas(f"{quote}\n{context}", lexicon)
    quoted = _lemmas(quote, lexicon)
    claim_words = _WORD.findall(normal(claim))
    said = passage_lemmas(claim_words, lexicon)
    for word in claim_words:
        own = lexicon.lemmas(word) | {word}
        if own & page or word in _NOT_CONTENT or is_cue(word):
            continue  # "no" beside "all" is the negation check's
        for lemma in own:
            paired = opposites(lemma, lexicon) & quoted & said
            if not paired:
                continue
            near: set[str] = set()
            for form in own:
                near |= side_of(form) | set(lexicon.related(form))
            if near & page:
                continue
            theirs = min(paired)
            return [
                Reason(
                    "opposite_added",
                    f'the claim says "{word}" beside "{theirs}"; the page says only "{theirs}"',
                    claim_says=word,
                    page_says=theirs,
                )
            ]
    return []


def comparison_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """A comparison of the claim where the quote compares nothing (module doc)."""
    if _lemmas(quote, lexicon) & (COMPARING | DIRECTIONAL | _GAINS):
        return []  # the quote compares: whether the claim's comparison is its one, others say
    page = _lemmas(f"{quote}\n{context}", lexicon)
    order = _ORDER.search(normal(claim))
    if order is not None and not page & _ORDER_WORDS:
        return [
            Reason(
                "order_added",
                f'the claim says "{order.group(1)}"; the quote orders nothing in time',
                claim_says=order.group(1),
            )
        ]
    for word in _WORD.findall(normal(claim)):
        own = lexicon.lemmas(word) | {word}
        if not own & COMPARING:
            continue
        near: set[str] = set(own)
        for form in own:
            near |= set(lexicon.related(form))
        if near & page:
            continue
        return [
            Reason(
                "comparison_added",
                f'the claim says "{word}"; the quote compares nothing',
                claim_says=word,
            )
        ]
    return []
