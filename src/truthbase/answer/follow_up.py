"""How the extractive answerer reads a follow-up's :class:`~truthbase.turns.Resolution`.

A follow-up ("What does the second one do?") means little alone; its resolution says what the
earlier turns lend it. The answerer (:mod:`.extractive`) scores a follow-up's sentences by

- its own words, and the words its ordinal points at (:attr:`~truthbase.turns.Resolution.
  referents`: "the second one" is "MAP") at the same weight: the answer is about them (the
  question it reads, :attr:`~truthbase.turns.Resolution.answer_question`, has them in the
  ordinal's place already);
- the words the earlier turns lend it (their subject, the previous answer's repeated words)
  at ``extractive.follow_up_context_weight`` of their idf weight (:class:`Focus`).

A follow-up whose ordinal names one item of a list ("the second one": MAP of GOVERN, MAP,
MEASURE, MANAGE) cites a sentence that names another item of that list only when no other
sentence is left to cite (:func:`names_other_item`): such a sentence restates the list ("the
Core is composed of four functions: ...") or relates the items, where the question asks about
the one.

Then policy rule 4 (:func:`truthbase.answer.policy.follow_up_refuses`) reads
:func:`new_words_held`: the share of the words the follow-up adds that the cited passages hold.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..cite.align import content_words, passage_lemmas
from ..cite.lexicon import load_lexicon
from ..model import Located, overlaps
from ..text.vocabulary import stem, terms, weighted_coverage
from ..turns import Resolution
from .model import Source

__all__ = [
    "Focus",
    "earlier_side",
    "focus_coverage",
    "follow_up_focus",
    "names_other_item",
    "new_words_held",
]


@dataclass(frozen=True, slots=True)
class Focus:
    """What a follow-up's sentences are scored by beside its own words: the terms the earlier
    turns lend it (stemmed, none of the question's), at ``weight`` of the question's own in
    the lexical and context shares, the terms its ordinal names (``named``, at the question's
    own weight), the text the sentence embeddings are compared with (the question followed by
    the lent words: "And at Tier 3?" alone is close to nothing)."""

    lent: tuple[str, ...]
    weight: float
    cosine_text: str
    named: tuple[str, ...] = ()


def follow_up_focus(question: str, follow_up: Resolution | None, weight: float) -> Focus | None:
    """The focus of a resolved follow-up (None for a first turn, a new topic, or nothing to
    read: no word lent at a weight above 0 and no referent the question lacks)."""
    if follow_up is None:
        return None
    own = set(terms(question))
    named = tuple(t for t in dict.fromkeys(terms(" ".join(follow_up.referents))) if t not in own)
    lent: tuple[str, ...] = ()
    if weight > 0:
        lent = tuple(
            t
            for t in dict.fromkeys(terms(" ".join(follow_up.context_words)))
            if t not in own and t not in named
        )
    if not (lent or named):
        return None
    words = follow_up.context_words if lent else follow_up.referents
    return Focus(lent, weight, f"{question} ({' '.join(words)})", named)


def focus_coverage(
    query: Sequence[str],
    passage: Sequence[str],
    idf: dict[str, float],
    unseen: float,
    focus: Focus | None,
) -> float:
    """:func:`~truthbase.text.vocabulary.weighted_coverage` of ``query`` and the focus's named
    terms, with its lent terms added to both masses at ``focus.weight`` of their idf."""
    if focus is None:
        return weighted_coverage(query, passage, idf, unseen)
    own, have = set(query) | set(focus.named), set(passage)
    lent = [t for t in focus.lent if t not in own]
    total = sum(idf.get(t, unseen) for t in own) + focus.weight * sum(
        idf.get(t, unseen) for t in lent
    )
    found = sum(idf.get(t, unseen) for t in own & have) + focus.weight * sum(
        idf.get(t, unseen) for t in lent if t in have
    )
    return found / total if total > 0 else 0.0


def new_words_held(
    follow_up: Resolution | None, cited: Collection[int], sources: Sequence[Source]
) -> float | None:
    """The share of the follow-up's new words (:attr:`~truthbase.turns.Resolution.new_words`,
    stemmed) that occur in the sources its answer sentences come from (``cited``: their
    numbers); None when it adds no
    word (or is not a follow-up)."""
    if follow_up is None or not follow_up.new_words:
        return None
    wanted = set(terms(" ".join(follow_up.new_words)))
    if not wanted:
        return None
    have: set[str] = set()
    words: list[str] = []
    for source in sources:
        if source.n in cited:
            have.update(terms(source.text))
            words += content_words(source.text)
    held = wanted & have
    meant = _meant_elsewise(follow_up, wanted - held, words)
    return (len(held) + meant) / len(wanted)


def _meant_elsewise(follow_up: Resolution, missing: set[str], words: Sequence[str]) -> int:
    """How many of the ``missing`` new words (stems) the cited passages say in other words: the
    word with the particle after it in the question is a phrasal verb of WordNet ("stand for")
    that shares a sense with a passage word ("represent"): a phrasal verb means what its head
    word alone does not, so its head is no word a passage need repeat. Only phrasal verbs and
    only synonyms: a single word's synonyms ("left": "forget") and the support check's wider
    relations let rule 4 answer unanswerable follow-ups (measured: 5 of 6 refused fell to 4 and
    3), and refusing those is what the rule is for."""
    if not missing:
        return 0
    lexicon = load_lexicon()
    asked = re.findall(r"[^\W\d_]+", follow_up.question.casefold())
    phrasal: list[set[str]] = []
    for word in follow_up.new_words:
        if stem(word.casefold()) not in missing:
            continue
        missing.discard(stem(word.casefold()))
        meanings: set[str] = set()
        for i, w in enumerate(asked[:-1]):
            if w == word.casefold():
                meanings |= lexicon.lemmas(f"{w}_{asked[i + 1]}")
        if meanings:
            phrasal.append(meanings)
    if not phrasal:  # no phrasal verb: the passages need not be lemmatized
        return 0
    passage = passage_lemmas(words, lexicon)
    return sum(
        any(m in passage or lexicon.synonyms(m) & passage for m in meanings) for meanings in phrasal
    )


_S = TypeVar("_S", bound=Located)


def earlier_side(candidates: Sequence[_S], follow_up: Resolution | None) -> _S | None:
    """The sentence that shows the earlier side of a comparison: for the first span of
    :attr:`~truthbase.turns.Resolution.compared` (best first) that a candidate overlaps, the
    best such candidate (``candidates`` are best first); None when the follow-up compares
    nothing or the search for it did not bring those passages back."""
    if follow_up is None or not follow_up.compared:
        return None
    for span in follow_up.compared:
        for c in candidates:
            if overlaps(c, span):
                return c
    return None


def names_other_item(text: str, follow_up: Resolution | None) -> bool:
    """Whether ``text`` names an item of the list the follow-up's ordinal chose from, other than
    the one it names (:attr:`~truthbase.turns.Resolution.referent_others`): every content term
    of that item occurs in the text ("tree traversal" needs both "tree" and "traversal")."""
    if follow_up is None or not follow_up.referent_others:
        return False
    have = set(terms(text))
    for item in follow_up.referent_others:
        wanted = set(terms(item))
        if wanted and wanted <= have:
            return True
    return False
