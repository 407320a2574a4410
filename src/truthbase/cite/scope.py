"""Quantifiers, modals and hedges: a claim wider, stronger or surer than its quote.

The scope check of :func:`truthbase.cite.support.check_support` (``scope_widened``,
``modality``, ``hedge_dropped``): an exclusive or universal word of the claim ("only", "every")
the quote has none of (a quote's "each", "throughout" or "the rest" says what "every" says); an
obligation ("must") where the quote has a weaker modal; a hedge of the quote ("generally",
"likely") about what the claim states, dropped (a claim's "expects" keeps it in other words);
and a claim surer than its quote: "impossible" for "difficult", "demonstrate" for "we believe",
"required to" for "encouraged to", another bound of the same count ("genau einen" for
"höchstens einen").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from .align import PHRASE_WORD, at_every_place, clause_after, clause_before, content_words, normal
from .model import Reason
from .numbers import NUMBER_WORDS

__all__ = [
    "EXCLUSIVE",
    "HEDGES",
    "OBLIGATION",
    "UNIVERSAL",
    "WEAK_MODALS",
    "qualified_part",
    "scope_reasons",
]

# fmt: off
#: Claim words that make it exclusive: the quote must say so too.
EXCLUSIVE = frozenset(
    "only solely exclusively sole alone nur ausschließlich allein einzig".split()  # noqa: SIM905
)
#: Claim words that make it universal. Not "whole" and "entire": they mostly set a whole
#: against its parts ("whole methods" against loops, "the entire duration" for "over the course
#: of") and caught no wrong claim in claims-dev.json and the sets written blind, while they
#: vetoed five faithful ones (docs/evals/claims-realistic.md, round 6); they still widen a quote
#: that speaks of a part (:data:`_PART`).
UNIVERSAL = frozenset(
    """
    all every always complete everything alle jede jeder jedes jedem jeden immer
    stets sämtliche gesamte gesamten
    """.split()  # noqa: SIM905
)
#: "Whole" and "entire" (no universal: see above) widen a quote that speaks of a part.
_WHOLE = frozenset("whole entire".split())  # noqa: SIM905
_PART = frozenset("subset part portion sample fraction some teil teilmenge".split())  # noqa: SIM905
#: Bounds before a number that make it no exact count ("at least one", "among two").
_BOUND_BEFORE = re.compile(
    r"\b(?:at least|more than|over|among|including|up to|at most|mindestens|über|mehr als)\s+$"
)


def _exact_counts(quote_norm: str) -> frozenset[str]:
    """The number words whose number the quote gives (as a word or in digits) with no bound
    before it."""
    found = set()
    for word, value in NUMBER_WORDS.items():
        for m in re.finditer(rf"(?<![\w.,])(?:{word}|{value})(?![\w.,]\d|\w)", quote_norm):
            if not _BOUND_BEFORE.search(quote_norm[: m.start()]):
                found.add(word)
                break
    return frozenset(found)


#: Quote words that say what a claim's universal says: "for each type" restated "for every
#: category", "throughout the lifecycle" as "across the whole lifecycle", "0 to the rest" as
#: "zero to every lower order".
_SAYS_UNIVERSAL = frozenset("each throughout rest remaining jeweils".split())  # noqa: SIM905
#: Claim words that keep a hedge in other words: "the kind of actor it expects to benefit" for
#: "likely to benefit".
_EXPECTS = frozenset("expect expects expected probably probable presumably".split())  # noqa: SIM905
#: Words after "only" or "all" that make it no quantifier: "only a third", "only roughly",
#: "all their children".
_NOT_QUANTIFIED = frozenset(
    """
    a an about approximately roughly around nearly almost their its these those of partly
    partially slightly somewhat
    """.split()  # noqa: SIM905
)
#: Modal words of obligation: a claim's "must" is a veto where the quote has a weaker modal.
OBLIGATION = frozenset("must shall muss müssen".split())  # noqa: SIM905
#: Weaker modals than an obligation.
WEAK_MODALS = frozenset(
    "may might can could should kann können darf dürfen sollte".split()  # noqa: SIM905
)
#: Hedges: a quote that has one about the claim's words needs one in the claim.
HEDGES = frozenset(
    """
    may might can could often most some many typically generally usually tend tends likely
    possibly sometimes several frequently mainly mostly largely partly partially kann können
    meist oft häufig manche einige
    """.split()  # noqa: SIM905
)
# fmt: on


def _first(words: Sequence[str], wanted: frozenset[str]) -> str | None:
    return next((w for w in words if w in wanted), None)


#: Words before "all" that make an idiom of it, not a quantifier ("above all", "at all",
#: "after all", "first of all").
_IDIOM_BEFORE_ALL = frozenset("above at after of".split())  # noqa: SIM905


#: What after "only a"/"only an" makes an amount, not an exclusion ("only a third", "only a
#: few"); "consists only of plans", "only an organization's practices" exclude.
_AMOUNTS = frozenset(
    """
    third quarter half fifth tenth few little small handful fraction bit minority portion
    part share percent dozen hundred thousand single slight modest marginal minor limited
    moderate partial subset couple number sample
    """.split()  # noqa: SIM905
)
#: Words after an exclusive word that make no exclusion of it ("only roughly", "only partly").
_NOT_EXCLUSIVE = _NOT_QUANTIFIED - {"of", "a", "an", "their", "its", "these", "those"}


def _quantifier(
    words: Sequence[str], group: frozenset[str], counted: frozenset[str] = frozenset()
) -> str | None:
    """The first word of ``group`` in ``words`` that quantifies; ``counted``: the number words
    the quote gives as exact counts ("only one of the ten" where the quote says "one of ten")."""
    exclusive = group is EXCLUSIVE
    for k, w in enumerate(words):
        following = words[k + 1] if k + 1 < len(words) else ""
        idiom = w == "all" and k > 0 and words[k - 1] in _IDIOM_BEFORE_ALL
        if exclusive:
            after = words[k + 2] if k + 2 < len(words) else ""
            numeric = any(c.isdigit() for c in after)  # "only a 2% gain"
            amount = following in ("a", "an") and (after in _AMOUNTS or numeric)
            amount = amount or following in counted  # "only one of the ten": a count
            quantified = following not in _NOT_EXCLUSIVE and not amount
        else:
            quantified = following not in _NOT_QUANTIFIED
        quantified = quantified and not following.isdigit()
        if w in group and quantified and not idiom:
            return w
    return None


#: A claim that something cannot be done where the quote says it is hard: "it is impossible to
#: determine" for "it is difficult to determine".
_HARD = re.compile(r"\b(?:difficult|challenging|schwierig|aufwendig|(?:hard|schwer) (?:to|zu))\b")
_IMPOSSIBLE = re.compile(
    r"\b(?:impossible|unmöglich|"
    r"(?:unable|cannot|can't)(?! (?:easily|readily|always|fully|simply)))\b"
)
#: A claim that proves what the quote believes: "the authors demonstrate experimentally" for
#: "we believe".
_BELIEF = frozenset(
    """
    believe believes hypothesize hypothesizes speculate vermuten glauben
    """.split()  # noqa: SIM905
)
_PROOF = frozenset(
    """
    demonstrate demonstrates demonstrated prove proves proved proven establish establishes
    established confirm confirms confirmed beweisen beweist bewiesen belegen belegt
    """.split()  # noqa: SIM905
)
#: Bounds of a count, each family its own: "genau einen" is not "höchstens einen".
_BOUNDS = (
    ("at most", "no more than", "up to", "höchstens", "maximal"),
    ("at least", "no fewer than", "no less than", "mindestens"),
    ("exactly", "precisely", "genau"),
)


#: What follows a bound of a count: a number, or a number word ("einen", "one", "two").
_COUNT = r"(?:\d[\d.,]*%?|one|two|three|four|five|ein|eine|einen|einem|einer|zwei|drei|vier|fünf)"


def _bounds(text: str) -> dict[str, int]:
    """The counts of ``text`` a bound is put on, each with its bound's family ("höchstens
    einen" -> {"einen": 0}); a bound not before a count ("up to each organization") is none."""
    found: dict[str, int] = {}
    for family, phrases in enumerate(_BOUNDS):
        for phrase in phrases:
            for match in re.finditer(rf"\b{phrase}\s+({_COUNT})(?![\w.,])", text):
                found.setdefault(match.group(1), family)
    return found


def _strength_reasons(
    claim_words: set[str], quote_words: set[str], claim: str, quote: str
) -> list[Reason]:
    """The claim surer than the quote: impossible for hard, proven for believed, another bound
    of a count."""
    impossible, hard = _IMPOSSIBLE.search(claim), _HARD.search(quote)
    if impossible and hard and not _IMPOSSIBLE.search(quote):
        word, theirs = impossible.group(), hard.group()
        return [
            Reason(
                "modality",
                f'the claim says "{word}" where the quote says "{theirs}"',
                claim_says=word,
                page_says=theirs,
            )
        ]
    proof, belief = _PROOF & claim_words, _BELIEF & quote_words
    if proof and belief and not _PROOF & quote_words and not _BELIEF & claim_words:
        word, theirs = sorted(proof)[0], sorted(belief)[0]
        return [
            Reason(
                "hedge_dropped",
                f'the claim says "{word}" where the quote says "{theirs}"',
                claim_says=word,
                page_says=theirs,
            )
        ]
    ours, page = _bounds(claim), _bounds(quote)
    for count, family in sorted(ours.items()):
        other = page.get(count)
        if other is not None and other != family:
            said, written = _BOUNDS[family][0], _BOUNDS[other][0]
            return [
                Reason(
                    "scope_widened",
                    f'the claim bounds "{count}" as "{said}" where the quote says "{written}"',
                    claim_says=f"{said} {count}",
                    page_says=f"{written} {count}",
                )
            ]
    return []


#: Obligations in more words than a modal ("are required to evaluate"), and the quote's words
#: that only advise ("are encouraged to evaluate", "NIST recommends").
_OBLIGATION_PHRASE = re.compile(
    r"\b(?:(?:required|obligated|obliged|mandated|compelled) to|mandatory|"
    r"verpflichtet|vorgeschrieben)\b"
)
_ADVISED = frozenset(
    """
    encouraged encourages encourage recommended recommends recommend optional voluntary
    empfohlen empfiehlt
    """.split()  # noqa: SIM905
)


def _obligation_phrase(text: str) -> str | None:
    """An obligation in more words than a modal, not negated ("not required to" obliges to
    nothing)."""
    for found in _OBLIGATION_PHRASE.finditer(text):
        if not re.search(r"\b(?:not|nicht|no|kein\w*)\s+(?:\w+\s+)?$", text[: found.start()]):
            return found.group()
    return None


def scope_reasons(claim: str, quote: str, context: str) -> list[Reason]:
    """Exclusive or universal words the quote lacks, an obligation where the quote has a weaker
    modal, a hedge the claim drops, a claim surer than its quote (see the module doc)."""
    claim_words = [w.strip(".,;:!?()\"'") for w in normal(claim).split()]
    quote_words = [w.strip(".,;:!?()\"'") for w in normal(quote).split()]
    have = set(quote_words)
    # the quote's exact counts matter only to an exclusive word before a number word ("only
    # one"): 32 patterns a check, so read only then
    exclusive_count = any(
        w in EXCLUSIVE and nxt in NUMBER_WORDS for w, nxt in pairwise(claim_words)
    )
    counted = _exact_counts(normal(quote)) if exclusive_count else frozenset()
    for group, said in ((EXCLUSIVE, EXCLUSIVE), (UNIVERSAL, UNIVERSAL | _SAYS_UNIVERSAL)):
        word = _quantifier(claim_words, group, counted)
        if word is not None and not said & have:
            return [
                Reason(
                    "scope_widened",
                    f'the claim says "{word}", the quote has no such word',
                    claim_says=word,
                    page_says=_first(quote_words, HEDGES) or "",
                )
            ]
    whole = _first(claim_words, _WHOLE)
    part = _first(quote_words, _PART)
    if whole is not None and part is not None and not (UNIVERSAL | _SAYS_UNIVERSAL) & have:
        return [
            Reason(
                "scope_widened",
                f'the claim says "{whole}" where the quote says "{part}"',
                claim_says=whole,
                page_says=part,
            )
        ]
    word = _first(claim_words, OBLIGATION) or _obligation_phrase(normal(claim))
    weak = _first(quote_words, WEAK_MODALS | _ADVISED)
    obliged = bool(OBLIGATION & have) or _obligation_phrase(normal(quote)) is not None
    if word is not None and weak is not None and not obliged:
        return [
            Reason(
                "modality",
                f'the claim says "{word}" where the quote says "{weak}"',
                claim_says=word,
                page_says=weak,
            )
        ]
    stronger = _strength_reasons(set(claim_words), have, normal(claim), normal(quote))
    if stronger:
        return stronger
    hedge = _hedge_about(quote_words, set(content_words(claim)), normal(quote).split())
    if hedge is not None and not (HEDGES | EXCLUSIVE | _EXPECTS) & set(claim_words):
        return [
            Reason(
                "hedge_dropped",
                f'the quote says "{hedge}", the claim states it without a hedge',
                page_says=hedge,
            )
        ]
    return []


#: Hedges that state an ability or a count more than a doubt: a claim may drop them ("can be
#: read in", German "kann ... nachgelesen werden").
_ABILITY = frozenset("can could kann können several many some".split())  # noqa: SIM905


#: Words after a hedge that it hedges, with those before it in its clause, not past its
#: sentence ("takes 90 hours, although this number may vary" hedges the number, not the
#: hours): two of them in the claim make the claim state what it hedges ("Generally, the
#: hallucinations were minor" hedges no claim about hallucinations that do not propagate).
_HEDGED = 8


def _superlative(words: Sequence[str], k: int) -> bool:
    """``words[k]`` is the "most" of a superlative ("the most cited", "the five most highly
    weighted entities"), not a hedge ("Of the models in Table 3, most failed" is one)."""
    if words[k] != "most" or k == 0:
        return False
    before = words[k - 1]
    counted = before.isdigit() or before in NUMBER_WORDS
    return before == "the" or (counted and k > 1 and words[k - 2] in ("the", "top"))


#: Words after a comma that open a clause of their own: a hedge after one hedges that clause
#: ("takes 90 hours, although this number may vary"); after any other comma ("The tokenizer,
#: in our view, may reduce memory use") the clause goes on.
_CLAUSE_OPENERS = frozenset(
    """
    although though but while whereas which who whom whose since because unless obwohl
    während aber wobei weil da sodass
    """.split()  # noqa: SIM905
)
#: Abbreviations whose period ends no sentence.
_ABBREVIATIONS = frozenset(
    "e.g. i.e. cf. vs. etc. al. fig. approx. ca. z.b. bzw. d.h. u.a. vgl. sec. eq. no. nr.".split()  # noqa: SIM905
)


def _sentence_end(word: str) -> bool:
    return word.endswith((".", ";", "!", "?")) and word not in _ABBREVIATIONS and len(word) > 2


def _clause_start(written: Sequence[str], k: int) -> int:
    """Where the clause of ``written[k]`` starts: after its sentence's start, or after a comma
    that a clause opener follows."""
    for i in range(k - 1, -1, -1):
        if _sentence_end(written[i]):
            return i + 1
        if written[i].endswith(",") and written[i + 1] in _CLAUSE_OPENERS:
            return i + 1
    return 0


def _hedge_about(
    quote_words: Sequence[str], claim_words: set[str], written: Sequence[str]
) -> str | None:
    """A hedge of the quote whose next content word the claim has."""
    for k, word in enumerate(quote_words):
        if word not in HEDGES or word in _ABILITY or _superlative(quote_words, k):
            continue
        following = [w for w in quote_words[k + 1 : k + 4] if w and w not in HEDGES]
        start = _clause_start(written, k)
        end = next(
            (i + 1 for i in range(k, len(written)) if _sentence_end(written[i])), len(written)
        )
        sentence = quote_words[start : min(end, k + 1 + _HEDGED)]
        hedged = [w for w in sentence if w in claim_words]
        if any(w in claim_words for w in following) and len(set(hedged)) >= 2:
            return word
    return None


#: Words right before a verbatim part of the quote that restrict what it says ("Most users
#: start with ..." is no source for "Users start with ..."): quantifiers that make a part of a
#: whole, and hedges of frequency or likelihood. Not the modals ("may" is a month too) nor
#: "certain" ("it is certain that").
_RESTRICTS = frozenset(
    """
    most many some few several often usually typically generally sometimes frequently mostly
    largely partly partially likely possibly meist oft häufig manche einige wenige
    """.split()  # noqa: SIM905
)
#: How many words before a verbatim part, in its clause, a restricting word may stand ("some
#: of the users"), not across a conjunction ("contains some noise and the model ignores it").
_RESTRICT_REACH = 3
_JOINS = frozenset("and or but that which who whom whose und oder aber dass".split())  # noqa: SIM905
#: An opening phrase of a sentence that hedges all of it ("In most cases, ...").
_HEDGING_OPENING = re.compile(
    r"^(?:in (?:most|many|some) (?:cases|instances)|usually|typically|generally|in general|"
    r"often|mostly|sometimes|frequently|meistens|in der regel|oft|häufig)\s*,"
)
#: A condition a verbatim part is stated under: its sentence opens with one (the part after
#: the condition's comma), or one follows the part, or the part is one ("if" before it). Not
#: "provided" alone ("the data provided by the client") nor German "falls" (English "falls").
_CONDITION = r"(?:(?:only )?if|unless|provided that|as long as|(?:nur )?wenn|sofern|solange)"
_CONDITION_OPENS = re.compile(rf"^{_CONDITION}\b")
_CONDITION_FOLLOWS = re.compile(rf"^,?\s*{_CONDITION}\b")
_CONDITION_ENDS = re.compile(rf"\b{_CONDITION}\s*$")
#: Fewest words of a condition after its word: "if any", "if needed" state none.
_CONDITION_WORDS = 2


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence of ``text[at]`` starts: after the last ". ", "; ", "! " or "? "."""
    ends = [m.end() for m in re.finditer(r"[.;!?]\s+", text[:at])]
    return ends[-1] if ends else 0


def _qualifier_at(quote_norm: str, at: int, end: int) -> Reason | None:
    """What qualifies the part ``quote_norm[at:end]``: a restricting word just before it in its
    clause, or a hedging opening phrase of its sentence ("In most cases, ..."):
    ``hedge_dropped``; a condition its sentence opens with before it (the part is what holds
    under it), one right after it, or the part is the condition itself ("if" right before it):
    ``condition_dropped``."""
    clause = clause_before(quote_norm, at)
    before = PHRASE_WORD.findall(clause)[-_RESTRICT_REACH:]
    joined = [k for k, w in enumerate(before) if w in _JOINS]
    if joined:
        before = before[joined[-1] + 1 :]
    opening = quote_norm[_sentence_start(quote_norm, at) : at]
    hedge = next(
        (w for k, w in enumerate(before) if w in _RESTRICTS and not _superlative(before, k)),
        None,
    )
    if hedge is None and _HEDGING_OPENING.match(opening):
        hedge = opening.split(",")[0].strip()
    if hedge is not None:
        return Reason(
            "hedge_dropped",
            f'the quote says "{hedge}" about what the claim states without it',
            page_says=hedge,
        )
    supposing = _CONDITION_ENDS.search(clause)
    if supposing is None and _CONDITION_OPENS.match(opening) and "," not in opening:
        supposing = _CONDITION_OPENS.match(opening)
    if supposing is not None:
        return Reason(
            "condition_dropped",
            "the claim states as a fact what the quote only supposes",
            page_says=supposing.group().strip(),
        )
    condition: str | None = None
    if _CONDITION_OPENS.match(opening):
        condition = opening.split(",")[0].strip()
    following = _CONDITION_FOLLOWS.match(quote_norm[end:])
    if condition is None and following is not None:
        rest = PHRASE_WORD.findall(clause_after(quote_norm, end + following.end()))
        if len(rest) >= _CONDITION_WORDS:
            condition = " ".join([following.group().strip(" ,"), *rest[:8]])
    if condition is None:
        return None
    return Reason(
        "condition_dropped",
        f'the quote states it only under a condition ("{condition}")',
        page_says=condition,
    )


def qualified_part(claim_norm: str, quote_norm: str) -> Reason | None:
    """Why a claim that is a verbatim part of the quote is cut from what qualifies it, at
    every place it stands: a restricting word right before it ("most", "some", "few",
    "usually") or a condition it is stated under ("if ..., the job starts", "... starts
    unless ..."); None where one place stands unqualified. Both texts normalized
    (:func:`truthbase.cite.align.normal`)."""
    return at_every_place(
        claim_norm, quote_norm, lambda at, end: _qualifier_at(quote_norm, at, end)
    )
