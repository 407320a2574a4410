"""Negation: which words a negation cue scopes over, and whether claim and quote agree on it.

The negation check of :func:`truthbase.cite.support.check_support` (``negation_missing``,
``negation_dropped``): a negation of the claim (not, never, no, none, nor, without, cannot, n't,
nothing, nobody; German nicht, kein*, nie, niemals, ohne, nichts, weder) needs a negation in the
quote that scopes over the same words, and a negation of the quote whose first content word is
in the claim needs one in the claim. A negation's scope is the content terms after it up to the
end of its clause (:data:`NEGATION_SCOPE_TERMS` at most); two scopes agree when the first term
of either is in the other. "Not all X" says "some X are not": a claim with "some" (or a
negation of its own) restates it (:data:`SOME`); a claim that negates the quote's opposite ("not
after" for "before") restates it too (:func:`double_negations`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..text.fulltext import STOP_WORDS
from .align import PREFIX, at_every_place, clause_after, clause_before, normal, stems
from .model import Reason
from .numbers import TOKEN

__all__ = [
    "IMPLICIT_NEGATIONS",
    "NEGATION_ABOUT",
    "NEGATION_SCOPE_TERMS",
    "NEGATION_WORDS",
    "SOME",
    "Negation",
    "double_negations",
    "is_cue",
    "negated_part",
    "negated_words",
    "negation_reasons",
    "negations",
    "not_only_reasons",
]

#: A claim's negation contradicts the quote when one of its first this many scope terms is in
#: the quote (un-negated); further ones are mostly the claim's own rewording.
NEGATION_ABOUT = 2
#: A negation scopes over at most this many content terms after it, inside its clause.
NEGATION_SCOPE_TERMS = 5
#: Words right before and right after a verbatim part of the quote that are checked for a
#: negation ("never produces X", "X or not").
_VERBATIM_LOOKBEHIND = 3
_VERBATIM_LOOKAHEAD = 2

# fmt: off
#: Negation cues (normalized words); tokens ending in "n't" are cues too.
NEGATION_WORDS = frozenset(
    """
    not never no none nor neither without cannot nothing nobody nowhere
    nicht kein keine keinen keinem keiner keines nie niemals ohne nichts weder
    """.split()  # noqa: SIM905
)
# fmt: on
#: Universals a negation may deny ("not all", "not every"), and the words with which a claim
#: restates such a denial ("some incidents cannot be prevented" for "not all incidents can be
#: eliminated").
_UNIVERSALS = frozenset("all every each always alle jede jeder jedes immer".split())  # noqa: SIM905
SOME = frozenset("some several certain einige manche".split())  # noqa: SIM905
_NOT_NEGATIONS = (("not", "only"), ("no", "doubt"), ("nicht", "nur"))
_CLAUSE_END = re.compile(
    r"[,;:.!?()\[\]{}\"]|\s(?:but|whereas|while|although|however|aber|sondern)\s"
)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text)]


@dataclass(frozen=True, slots=True)
class Negation:
    """A negation cue as written and the stemmed content terms it scopes over."""

    cue: str
    scope: tuple[str, ...]
    #: The cue negates a universal ("not all", "nicht jede"): it says "some are not".
    universal: bool = False
    #: The hyphenated compound right after the cue ("without few-shot demonstrations"): one
    #: term, which a claim's other compound of the same head ("zero-shot") does not restate.
    head: str = ""
    #: The content terms of its clause before the cue ("hallucinations" in "hallucinations did
    #: not propagate"): what it is said of.
    subject: tuple[str, ...] = ()


def is_cue(word: str) -> bool:
    return word in NEGATION_WORDS or word.endswith("n't")


def _terms(text: str) -> list[str]:
    """The stemmed terms of ``text`` a negation can be about (no cue, no single letter)."""
    return [t for t in stems(text) if len(t) > 1 and not is_cue(t)]


def _clause_end(norm: str, start: int) -> int:
    """Where the clause that goes on at ``start`` of ``norm`` ends."""
    stop = _CLAUSE_END.search(norm, start)
    return stop.start() if stop else len(norm)


def negations(text: str) -> list[Negation]:
    """The negation cues of ``text`` with their scopes (see the module doc)."""
    norm = normal(text)
    tokens = _tokens(norm)
    found: list[Negation] = []
    for k, (word, _, end) in enumerate(tokens):
        if not is_cue(word):
            continue
        following = tokens[k + 1][0] if k + 1 < len(tokens) else ""
        if (word, following) in _NOT_NEGATIONS:
            continue
        scope = _terms(norm[end : _clause_end(norm, end)])
        opening = re.split(r"[,;:.!?()\[\]{}\"]", norm[: tokens[k][1]])[-1]
        subject = _terms(opening)
        if not scope:  # "correct or not?": what comes before it in its clause, nearest first
            scope = subject[::-1]
        universal = following in _UNIVERSALS
        head = following if "-" in following else ""
        scope = scope[:NEGATION_SCOPE_TERMS]
        found.append(Negation(word, tuple(scope), universal, head, tuple(subject)))
    return found


def _scopes_agree(a: Negation, b: Negation) -> bool:
    """Two negations are about the same thing: the first term of either is in the other's scope
    (two negations without any content words around them agree)."""
    if not a.scope or not b.scope:
        return not a.scope and not b.scope
    return a.scope[0] in b.scope or b.scope[0] in a.scope


#: Words that negate by their meaning ("lack", "absent"): a quote's "without retrieval tokens"
#: and a claim's "lack any retrieval tokens" agree.
IMPLICIT_NEGATIONS = frozenset(
    """
    lack lacks lacking lacked absent absence missing fail fails failed avoid avoids avoided
    omit omits omitted free exclude excludes excluded neither longer instead rather unable
    impossible prevent prevents prevented preventing fehlt fehlen ohne
    """.split()  # noqa: SIM905
)


#: "X rather than Y", "X instead of Y": the claim denies Y as a negation would (not German
#: "statt" alone: "findet jährlich statt").
_CONTRAST = re.compile(
    r"\b(?:rather than|instead of|anstatt|statt (?:zu|des|der|dem|den|eines|einer)|"
    r"anstelle (?:von|des|der))\s"
)
#: A quote that contrasts in other words ("replaces Y with X", "X over Y"): a claim's "X
#: instead of Y" restates it.
_QUOTE_CONTRASTS = re.compile(
    r"\b(?:over|replace[sd]?|replacing|instead|rather|in place of|ersetzt|ersetzen|statt|"
    r"anstatt|anstelle|gegenüber)\b"
)


_GERMAN_FUNCTION = frozenset(STOP_WORDS["de"])


def _contrasts(text: str) -> list[Negation]:
    """The claim's "rather than Y" / "instead of Y", each a negation of Y."""
    norm = normal(text)
    found: list[Negation] = []
    for match in _CONTRAST.finditer(norm):
        words = _terms(norm[match.end() : _clause_end(norm, match.end())])
        scope = [w for w in words if len(w) > 3 and w not in _GERMAN_FUNCTION]
        if scope:
            found.append(Negation(match.group().strip(), tuple(scope[:NEGATION_SCOPE_TERMS])))
    return found


def _has(terms: set[str], term: str) -> bool:
    """``term`` among ``terms``, or an inflection of it: the same first
    :data:`~truthbase.cite.align.PREFIX` letters of a longer word ("propagate", "propagated")."""
    if term in terms:
        return True
    return len(term) >= PREFIX + 2 and any(t[:PREFIX] == term[:PREFIX] for t in terms)


def _said_of(claim_neg: Negation, quote_neg: Negation) -> bool:
    """The claim negates what the quote's negation is said of or about: "no hallucinations
    spreading" for "hallucinations did not propagate", "did not carry over into the higher
    layers" for "did not propagate to higher layers" (one of the claim's first terms in the
    quote negation's clause)."""
    return bool(set(claim_neg.scope[:NEGATION_ABOUT]) & set(quote_neg.subject + quote_neg.scope))


def _implicit_negations(text: str) -> list[Negation]:
    """The words that negate by their meaning ("preventing us from applying the algorithm"),
    each with the content terms after it in its clause."""
    norm = normal(text)
    found: list[Negation] = []
    for word, _, end in _tokens(norm):
        if word not in IMPLICIT_NEGATIONS:
            continue
        scope = _terms(norm[end : _clause_end(norm, end)])
        found.append(Negation(word, tuple(scope[:NEGATION_SCOPE_TERMS])))
    return found


#: Words that open a condition or a relative clause ("if", "a system that", "eine Menge, die");
#: German relative pronouns only right after a comma (else they are articles), and a
#: preposition may come first ("eine Fläche, auf der").
_CONDITION_ANYWHERE = frozenset(
    "if unless when whenever whose that which who wenn falls sofern solange".split()  # noqa: SIM905
)
_CONDITION_AFTER_COMMA = frozenset(
    "der die das dem den deren dessen denen welche welcher welches".split()  # noqa: SIM905
)
_CONDITION_CUES = frozenset({"without", "ohne"})
#: Verbs after which "that" opens what is said, not a relative clause ("the authors show that
#: the method does not scale").
_SAYING = frozenset(
    """
    show shows showed shown find finds found say says said report reports reported note notes
    noted state states stated argue argues argued claim claims claimed demonstrate demonstrates
    demonstrated believe believes think thinks suggest suggests suggested conclude concludes
    concluded explain explains explained know knows known mean means
    """.split()  # noqa: SIM905
)
#: A quote that states a condition or a need: only such a quote has a contrapositive ("A needs
#: B", "B, wenn A", "X heißt P, wenn ...", "when they outperform"), or a supposition and what
#: follows from it ("Es sei X ... . Dann ...", "Suppose ... . Then ...").
_STATES_CONDITION = re.compile(
    r"\b(?:if|unless|when|whenever|only|before|prior to|needs?|needed|requires?|required|"
    r"necessary|essential|prerequisite|bevor|wenn|falls|sofern|solange|nur|benötigt|braucht|erfordert|voraus|"
    r"voraussetzung|notwendig)\b|,\s*(?:so|dann)\s|"
    r"\b(?:es sei|sei|seien|let|suppose)\b[^.]*\.\s*(?:dann|then)\s"
)


#: Words that cannot open a German verb-first condition: a clause that starts with one is a
#: statement ("Der Dienst startet nicht neu, dann ...": a result, no condition).
_NOT_A_VERB = frozenset(
    """
    der die das den dem des ein eine einen einem einer eines es er sie ich du wir ihr man dies
    diese dieser dieses jede jeder jedes alle kein keine nicht auch nur so dann laut nach
    """.split()  # noqa: SIM905
)


#: German words a German sentence has and an English one lacks.
_GERMAN_WORDS = frozenset(
    """
    der das und ist nicht ein eine einen einem einer kein keine keinen es gibt mit von zu für
    dass sind wird den dem des aus auf auch sich wenn hat haben jede jeder ohne
    """.split()  # noqa: SIM905
)


def _verb_first(norm: str, start: int) -> bool:
    """The cue at ``start`` is in a German condition with its verb first, answered by ", so" or
    ", dann" ("Hat X keine Y, so gibt es ..."): the clause opens the sentence (or follows a
    colon) with a word that can be a verb. English "so" and "then" join a result to its
    reason and are left out."""
    if not re.match(r"[^,;:.!?]*,\s*(?:so|dann)\s", norm[start:]):
        return False
    if len(_GERMAN_WORDS & set(norm.split())) < 2:
        return False  # "The cache is not warm, so ...": English, a result
    opening = re.split(r"[;:.!?()\[\]{}\"]", norm[:start])[-1]
    if "," in opening:
        return False
    first = opening.split()[:1]
    return bool(first) and first[0] not in _NOT_A_VERB and first[0].isalpha()


def _conditional(norm: str, start: int, cue: str) -> bool:
    """The cue at ``start`` of ``norm`` is in a condition or a relative clause."""
    if cue in _CONDITION_CUES:
        return True
    if _verb_first(norm, start):
        return True
    before = norm[:start]
    opening = re.split(r"[;:.!?()\[\]{}\"]", before)[-1]
    clause = opening.split(",")[-1].split()
    for k, word in enumerate(clause):
        if word in _CONDITION_ANYWHERE and not (k and clause[k - 1] in _SAYING):
            return True
    return "," in opening and bool(_CONDITION_AFTER_COMMA & set(clause[:2]))


def contrapositive(claim: str, quote: str) -> bool:
    """The claim negates a condition and its consequence ("a system that is not valid cannot
    be trustworthy", "eine Fläche, auf der kein Normalenfeld existiert, ist nicht orientierbar"):
    two negation cues, the first in a condition or a relative clause (the next is taken for
    the consequence: where a relative clause ends is not marked); the first may be a verb that
    negates ("an operator whose list lacks them cannot dispatch"). It restates an un-negated
    "A needs B" / "B, wenn A" by contraposition, so the quote must state a condition or a
    need; two negations of a plain statement deny it."""
    norm = normal(claim)
    tokens = _tokens(norm)
    cues = [(word, start) for word, start, _ in tokens if is_cue(word)]
    if len(cues) == 1:
        # a condition may negate by its verb: "an operator whose list lacks them cannot ..."
        lacking = [(w, start) for w, start, _ in tokens if w in IMPLICIT_NEGATIONS]
        if lacking and lacking[0][1] < cues[0][1]:
            cues.insert(0, lacking[0])
    if len(cues) != 2 or not _STATES_CONDITION.search(normal(quote)):
        return False
    return _conditional(norm, cues[0][1], cues[0][0])


def negation_reasons(claim: str, quote: str) -> list[Reason]:
    """A claim negation about words the quote states un-negated; a quote negation about words
    the claim states un-negated (see the module doc). A claim negation whose words the quote
    does not have is a paraphrase ("tend not to make full use" of "underutilize"), left to the
    coverage."""
    reasons: list[Reason] = []
    in_claim, in_quote = negations(claim), negations(quote)
    claim_terms = set(stems(claim))
    quote_stems = stems(quote)
    quote_terms = set(quote_stems)
    # a contrast denies what it is about: its first word must be the quote's, and the quote
    # must not contrast the same things in other words
    if not _QUOTE_CONTRASTS.search(normal(quote)):
        in_claim += [c for c in _contrasts(claim) if c.scope[0] in quote_terms]
    claim_words = set(normal(claim).split())
    implicit = bool(IMPLICIT_NEGATIONS & claim_words)
    implied = _implicit_negations(quote)
    if not in_quote and not implied and contrapositive(claim, quote):
        in_claim = []
    for neg in in_claim:
        about_quote = any(t in quote_terms for t in neg.scope[:NEGATION_ABOUT])
        said = any(_scopes_agree(neg, q) or _said_of(neg, q) for q in in_quote + implied)
        if about_quote and not said:
            reasons.append(
                Reason(
                    "negation_missing",
                    f'the claim says "{neg.cue}", the quote does not',
                    claim_says=" ".join((neg.cue, *neg.scope[:2])),
                    page_says=" ".join(neg.scope[:2]),
                )
            )
    for neg in in_quote:
        talked_about = bool(neg.scope) and _has(claim_terms, neg.scope[0])
        if talked_about and len(neg.scope) > 1 and quote_stems.count(neg.scope[0]) > 1:
            # the quote says its first word un-negated too ("does not rotate the pages; to
            # rotate them, use ..."): the claim must share more of what is negated
            talked_about = any(_has(claim_terms, t) for t in neg.scope[1:3])
        if neg.head and neg.head.replace("-", " ") not in normal(claim).replace("-", " "):
            talked_about = False  # "without few-shot demonstrations" and a claim's "zero-shot"
        agreed = any(
            any(_has(set(c.scope), t) for t in neg.scope) or _scopes_agree(neg, c) for c in in_claim
        )
        agreed = agreed or (neg.universal and bool(SOME & claim_words))
        if talked_about and not implicit and not agreed:
            what = " ".join(neg.scope[:3])
            reasons.append(
                Reason(
                    "negation_dropped",
                    f'the quote says "{neg.cue}" about "{what}", the claim does not',
                    claim_says=neg.scope[0],
                    page_says=f"{neg.cue} {what}",
                )
            )
    return reasons


def negated_part(claim_norm: str, quote_norm: str) -> str | None:
    """A cue next to every place of the quote the claim is (in the same clause: up to
    :data:`_VERBATIM_LOOKBEHIND` words before, :data:`_VERBATIM_LOOKAHEAD` after), if any."""

    def cue_at(at: int, end: int) -> str | None:
        near = [w for w, _, _ in _tokens(clause_before(quote_norm, at))][-_VERBATIM_LOOKBEHIND:]
        near += [w for w, _, _ in _tokens(clause_after(quote_norm, end))][:_VERBATIM_LOOKAHEAD]
        return next((w for w in near if is_cue(w)), None)

    return at_every_place(claim_norm, quote_norm, cue_at)


#: Words after a negation cue, inside its clause, that it negates for :func:`negated_words`.
NEGATED_REACH = 5


def negated_words(text: str) -> dict[str, str]:
    """The words a negation cue of ``text`` negates (up to :data:`NEGATED_REACH` words after
    it, inside its clause, stop words included: "not wait until after"), each with its cue."""
    norm = normal(text)
    tokens = _tokens(norm)
    found: dict[str, str] = {}
    for k, (word, _, end) in enumerate(tokens):
        if not is_cue(word):
            continue
        limit = _clause_end(norm, end)
        for following, start, _ in tokens[k + 1 : k + 1 + NEGATED_REACH]:
            if start >= limit:
                break
            found.setdefault(following, word)
    return found


def double_negations(claim: str, reasons: list[Reason]) -> list[Reason]:
    """``reasons`` without the opposites a claim negates ("should not wait until after the
    purchase" for "prior to the purchase": ``antonym`` says "after", the claim says "not ...
    after") and without the ``negation_missing`` of the cue that negates them."""
    negated = negated_words(claim)
    cues = {
        negated[r.claim_says] for r in reasons if r.code == "antonym" and r.claim_says in negated
    }
    if not cues:
        return reasons
    return [
        r
        for r in reasons
        if not (r.code == "antonym" and r.claim_says in negated)
        and not (r.code == "negation_missing" and r.claim_says.split(" ")[0] in cues)
    ]


#: "only" words and the cue that makes "not only" of them.
_ONLY = {"only": "not", "solely": "not", "merely": "not", "nur": "nicht", "bloß": "nicht"}
#: Content words after "only" that say what it restricts.
_ONLY_REACH = 2
_ARTICLES = frozenset(
    "the a an ein eine einer einem einen eines der die das dem den des in at on to im am".split()  # noqa: SIM905
)


def _restricted(tokens: Sequence[str], at: int) -> set[str]:
    """The first content words after ``tokens[at]``, as prefixes, inside its clause."""
    found: set[str] = set()
    for word in tokens[at + 1 :]:
        if word in ",;:.!?()" or len(found) >= _ONLY_REACH:
            break
        if word not in _ARTICLES and len(word) > 2:
            found.add(word[:PREFIX])
    return found


def not_only_reasons(claim: str, quote: str) -> list[Reason]:
    """The quote says "not only X" (X and more) and the claim "only X": the one reading a
    negation check cannot see, since "not only" is no negation of what follows it."""
    quote_tokens = [w for w, _, _ in _tokens(normal(quote))]
    claim_tokens = [w for w, _, _ in _tokens(normal(claim))]
    for k, word in enumerate(quote_tokens):
        if word not in _ONLY or not k or quote_tokens[k - 1] != _ONLY[word]:
            continue
        theirs = _restricted(quote_tokens, k)
        for m, ours in enumerate(claim_tokens):
            if ours not in _ONLY or (m and claim_tokens[m - 1] == _ONLY[ours]):
                continue
            if theirs & _restricted(claim_tokens, m):
                return [
                    Reason(
                        "not_only_dropped",
                        f'the quote says "{_ONLY[word]} {word}", the claim says "{ours}"',
                        claim_says=ours,
                        page_says=f"{_ONLY[word]} {word}",
                    )
                ]
    return []
