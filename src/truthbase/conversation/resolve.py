"""A follow-up question resolved against the earlier turns, without a model.

"And at Tier 3?" or "What are they embedded with?" mean nothing to a search on their own. The
earlier turns say what they mean: the previous question (as it was searched, so a chain of
follow-ups keeps its subject), the words its answer and cited passages repeat, and the documents
they cited. This module decides, deterministically:

1. Whether the question stands on its own (a new topic): it has enough content words of its
   own, few of them occur anywhere in the earlier turns (questions, answers, cited quotes), it
   does not open with an ellipsis ("And ...?"), and a comparison word ("similar", "compared")
   or a reference word ("it", "the second one") in it comes with enough words of its own to
   name what it refers to. Such a question is searched exactly as written, with no prior: the
   old topic must not be dragged in.
2. Otherwise, what to search: the question followed by the context words it lacks, the previous
   question's first (its subject), then a few words the previous answer and its quotes repeat
   most. The documents the previous answer cited become a *prior*: the search prefers their
   passages (one more ranked list in the fusion, see :func:`truthbase.retrieve.fusion.prefer`)
   but is not limited to them, so a comparison with another document still finds it.

Pronouns are not substituted: the search is over words, and the context words carry what the
pronoun meant. An ordinal that points at an item of the list an earlier answer gave (the
latest one that gives a list: "the second one") is (:mod:`.referents`): the item leads the
context words, the list's other items are left out of them, and the answerer reads the question
with the item in its place (and cites a sentence that names the other items only when nothing
else is left: :func:`truthbase.answer.follow_up.names_other_item`). The
marker lists are general English (pronouns, ordinals, comparison words, ellipsis openers), not
tuned to any question set. Pure: records in, a record out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..text.vocabulary import QUERY_STOP_WORDS, WORD, stem
from ..turns import CitedSpan, Resolution, Turn
from .documents import named_documents
from .referents import referred_items

__all__ = [
    "ResolveSettings",
    "content_words",
    "is_standalone",
    "new_words",
    "resolve_follow_up",
]

# fmt: off
#: Words that point back at something said before (pronouns, determiners used as pronouns,
#: ordinals of a list just given). English function words; none is a search term.
REFERENCE_WORDS = frozenset(
    """
    it its itself they them their theirs themselves he him his she her hers this that these
    those one ones former latter first second third fourth fifth last other others another
    there then such same
    """.split()  # noqa: SIM905
)
#: The comparison words that set two sides against each other ("How does that compare with
#: ...?", "Did it work any better?"): such a follow-up shows the earlier side again. Not "also",
#: "too", "same" or "either": "Does it also apply to small businesses?" asks about one side.
TWO_SIDED_WORDS = frozenset(
    """
    compare compared compares comparing comparison comparable similar similarly differ differs
    different difference versus vs likewise better worse
    """.split()  # noqa: SIM905
)
#: Words that compare with something named earlier: a question with one is never a new topic.
COMPARISON_WORDS = TWO_SIDED_WORDS | {"same", "also", "too", "either", "both", "instead"}
# fmt: on
#: Openers that leave out the subject or the predicate of the question before ("And at Tier 3?").
ELLIPSIS_OPENERS = re.compile(
    r"^\s*(?:and|but|or|so|also|then|what about|how about|same for|as for|and what about)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolveSettings:
    """The few numbers of the deterministic resolution. The new-topic rule's (the first three)
    were chosen on followups-dev.json's golden threads, with 5-fold cross-validation across
    conversations (``truthbase eval conversations``: ``topic_shift_detection``); the others by
    hand. docs/evals/conversations.md has the numbers."""

    #: A question with at least this many content words of its own may stand alone.
    standalone_words: int = 3
    #: ...and with this many, even with a comparison or reference word (it names its own).
    named_words: int = 7
    #: ...when at most this share of them occurs in the earlier turns.
    standalone_overlap: float = 0.25
    #: How many words of the previous answer and its quotes join the query.
    answer_words: int = 4
    #: How many earlier turns the context is read from (the last ones).
    context_turns: int = 2


def content_words(text: str) -> list[str]:
    """The words of ``text`` that can carry a topic, case-folded, in order, without repeats:
    not a question's phrasing (:data:`QUERY_STOP_WORDS`), not a reference or comparison word,
    at least three characters or containing a digit."""
    seen: dict[str, None] = {}
    for word in WORD.findall(text.casefold()):
        if word in QUERY_STOP_WORDS or word in REFERENCE_WORDS or word in COMPARISON_WORDS:
            continue
        if len(word) < 3 and not any(ch.isdigit() for ch in word):
            continue
        seen.setdefault(word, None)
    return list(seen)


def _stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words}


def _turn_texts(turn: Turn) -> list[str]:
    return [turn.searched_for or turn.question, turn.answer, *(c.quote for c in turn.citations)]


def points_back(question: str) -> bool:
    """Whether the question's wording ties it to what came before: an ellipsis opener, a
    comparison word, or a reference word (a pronoun, an ordinal such as "the second one")."""
    if ELLIPSIS_OPENERS.match(question):
        return True
    markers = COMPARISON_WORDS | REFERENCE_WORDS
    return any(w in markers for w in WORD.findall(question.casefold()))


def is_standalone(question: str, history: Sequence[Turn], settings: ResolveSettings) -> bool:
    """Whether ``question`` is a new topic: enough content words of its own, few of them in the
    earlier turns, no ellipsis opener, and no comparison or reference word unless it names many
    words of its own: "compare tree traversal with the collapsed tree" names both sides, and
    "Mr. Collins ... in his first letter" its own antecedent, where "the second one" does not."""
    own = _stems(content_words(question))
    if len(own) < settings.standalone_words or ELLIPSIS_OPENERS.match(question):
        return False
    if len(own) < settings.named_words and points_back(question):
        return False
    context = _stems(w for turn in history for t in _turn_texts(turn) for w in content_words(t))
    shared = len(own & context) / len(own)
    return shared <= settings.standalone_overlap


def _answer_words(turn: Turn, exclude: set[str], limit: int) -> list[str]:
    """The words the answer and its quotes repeat most (ties: first seen), not in ``exclude``."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for text in (turn.answer, *(c.quote for c in turn.citations)):
        for word in content_words(text):
            if stem(word) in exclude or word.isdigit():
                continue
            counts[word] += 1
            first.setdefault(word, len(first))
    ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
    return ranked[:limit]


def context_words(
    question: str,
    history: Sequence[Turn],
    settings: ResolveSettings,
    leave_out: Iterable[str] = (),
) -> list[str]:
    """The words a follow-up lacks: the earlier questions' content words (the last turn's
    first), then the last answer's most repeated ones; none the question already has, none
    of ``leave_out`` (the other items of a list when the follow-up names one of them)."""
    have = _stems(content_words(question)) | _stems(leave_out)
    words: list[str] = []
    for turn in reversed(history[-settings.context_turns :]):
        for word in content_words(turn.searched_for or turn.question):
            if stem(word) not in have:
                have.add(stem(word))
                words.append(word)
    if history:
        words += _answer_words(history[-1], have, settings.answer_words)
    return words


def new_words(question: str, history: Sequence[Turn]) -> list[str]:
    """The question's content words that no earlier turn has (in its question, what it was
    searched as, its answer or its quotes): what the follow-up asks beyond the inherited topic
    ("How many example problems does that catalog contain?" after a turn about the catalog
    adds "contain"; its answer must come from a passage that says so, not only one about the
    catalog)."""
    seen = _stems(
        w
        for turn in history
        for text in (turn.question, *_turn_texts(turn))
        for w in content_words(text)
    )
    return [w for w in content_words(question) if stem(w) not in seen]


def _followed(turn: Turn) -> bool:
    """Whether ``turn`` was itself searched as a follow-up (something was added to it or it was
    rewritten), not as a question of its own."""
    return turn.searched_for is not None and turn.searched_for.strip() != turn.question.strip()


def _topic_turns(history: Sequence[Turn]) -> list[Turn]:
    """The earlier turns of the current topic whose answers cited anything, latest first: back
    to the question of its own that opened it. A refused follow-up between leaves the topic
    where it was ("Which Category is it part of?", refused, then "Is there a comparable outcome
    in the AI RMF?"), but a refused question of its own ends the old topic (none)."""
    turns: list[Turn] = []
    for turn in reversed(history):
        if turn.citations:
            turns.append(turn)
        if not _followed(turn):
            break
    return turns


def _compared(topic: Sequence[Turn], titles: Mapping[str, str]) -> tuple[CitedSpan, ...]:
    """What a comparison compares with: the spans the turns of the current topic cited
    (``topic``, :func:`_topic_turns`), the one whose quote has most of its own turn's question
    words first, the later turn first among equals (an answer cites context beside its answer,
    and a follow-up of the thread may have been answered by a passage that only touches it: "Is
    there a comparable outcome in the AI RMF?" compares with the subcategory the first turn
    found, not with the overview sentence that answered "Which Category is it part of?");
    words of the cited documents' titles do not count (they say which document, and "Figure 2
    shows the CSF Functions" is not the answer to "Which CSF 2.0 Function ...?")."""
    scored: list[tuple[int, int, int, CitedSpan]] = []
    for age, turn in enumerate(topic):
        naming = _stems(w for d in turn.cited_documents for w in content_words(titles.get(d, "")))
        asked = _stems(content_words(turn.question)) - naming
        for order, c in enumerate(turn.citations):
            scored.append((-len(asked & _stems(content_words(c.quote))), age, order, c))
    return tuple(c for *_, c in sorted(scored, key=lambda t: t[:3]))


def resolve_follow_up(
    question: str,
    history: Sequence[Turn],
    settings: ResolveSettings | None = None,
    titles: Mapping[str, str] | None = None,
) -> Resolution:
    """What to search for ``question`` after ``history`` (oldest first), and why. ``titles``
    (document id -> title, the documents the asker may see): a follow-up that names a document
    the earlier answer did not cite (:func:`.documents.named_documents`) prefers that one, and
    the words of the earlier documents' titles are not lent to it."""
    settings = settings if settings is not None else ResolveSettings()
    titles = titles if titles is not None else {}
    if not history:
        return Resolution(
            question=question, searched_for=question, kind="first", reason="no earlier turn"
        )
    if is_standalone(question, history, settings):
        return Resolution(
            question=question,
            searched_for=question,
            kind="standalone",
            reason="a new topic: its words are not the earlier turns'",
        )
    previous = history[-1]
    # The list an ordinal points at is the latest one given: "Which of the two did better?" may
    # follow a turn about one of the two, whose answer gives no list of its own.
    referred = next(
        (
            found
            for turn in reversed(history)
            if (found := referred_items(question, turn.question, turn.answer)).named
        ),
        referred_items(question, previous.question, previous.answer),
    )
    referents = content_words(" ".join(referred.named))
    leave_out = [*referents, *(w for item in referred.others for w in content_words(item))]
    topic = _topic_turns(history)
    priors = topic[0].cited_documents if topic else ()
    why = "follows the previous turn: its subject" + (
        " and cited documents are added" if priors else " is added"
    )
    named = named_documents(question, titles)
    if named and not set(named) & set(priors):
        # "... in the AI RMF?" after an answer from the CSF: the question names the document
        # it is about; the earlier one's name would pull the search back to it.
        leave_out += [w for d in priors for w in content_words(titles.get(d, ""))]
        priors = named
        why = "follows the previous turn: its subject is added, and the document it names"
    words = [*referents, *context_words(question, history, settings, leave_out)]
    compares = any(w in TWO_SIDED_WORDS for w in WORD.findall(question.casefold()))
    searched = f"{question.strip()} ({' '.join(words)})" if words else question
    return Resolution(
        question=question,
        searched_for=searched,
        kind="resolved",
        reason=why,
        prior_documents=priors,
        context_words=tuple(words),
        new_words=tuple(new_words(question, history)),
        referents=referred.named,
        referent_others=referred.others if len(referred.named) == 1 else (),
        resolved_question=referred.question if referred.named else "",
        compared=_compared(topic, titles) if compares else (),
    )
