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
"""

from __future__ import annotations

import re

from .align import normal
from .lexicon import Lexicon
from .model import Reason
from .roles import page_words

__all__ = ["EXAMPLE_SAID", "example_reasons", "superlative_reasons"]

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
