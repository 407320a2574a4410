"""Vetoes for the slips language models make: each a named reason with the two sides.

A veto is a check no score overrides; :func:`truthbase.cite.support.check_support` runs these
after its number, negation and named-term checks. Each returns reasons carrying the claim's
words and the page's words that conflict, so the reader sees "the answer says after · the page
says before".

- ``antonym`` (polarity): a claim word whose opposite (WordNet's antonyms, and the directional
  pairs of :data:`OPPOSITES`: before/after, increase/decrease, higher/lower, ...) is in the quote
  while the word itself, or a synonym, is not.
- ``scope_widened`` and ``hedge_dropped`` (quantifier and modality scope): the claim says
  "only", "all", "every", "always", "must" where the quote and its context have no such word; or
  the quote hedges ("most", "may", "can", "often", "tend") the words the claim takes over while
  the claim has no hedge at all.
- ``roles_swapped`` (relation): two named terms or numbers that claim and quote share stand in
  opposite order around a directional word ("outperforms", "higher than", "before") that both
  have, with no passive "by" to turn the order round.
- ``number_scope``: "each"/"per" on one side and "in total"/"altogether" on the other, next to
  the same number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .align import content_words, normal, passage_lemmas
from .lexicon import Lexicon
from .model import Reason

__all__ = [
    "EXCLUSIVE",
    "HEDGES",
    "OPPOSITES",
    "UNIVERSAL",
    "antonym_reasons",
    "number_scope_reasons",
    "role_reasons",
    "scope_reasons",
]

# fmt: off
#: Directional opposites WordNet does not list as antonyms: any word of one side against any of
#: the other.
OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("before prior earlier preceding ahead precede", "after once following later subsequent follow afterwards"),
        ("first", "last"),
        ("increase raise rise grow improve gain higher more larger greater up", "decrease reduce lower fall shrink drop decline worsen degrade loss fewer less smaller down"),
        ("positive", "negative"), ("above over upper top", "below under lower bottom"),
        ("maximum", "minimum"), ("hard", "soft"), ("include", "exclude"), ("input", "output"),
        ("early", "late"), ("vor vorher", "nach nachher"), ("höher größer mehr", "niedriger kleiner weniger"),
        ("offen", "abgeschlossen"), ("erhöhen", "senken"),
    )
)
#: Claim words that make it exclusive: the quote must say so too.
EXCLUSIVE = frozenset(["only", "solely", "exclusively", "sole", "alone", "nur", "ausschließlich", "allein", "einzig"])
#: Claim words that make it universal.
UNIVERSAL = frozenset(
    ["all", "every", "always", "entire", "whole", "any", "never", "none", "everything", "alle", "jede", "jeder", "jedes", "jedem", "jeden", "immer", "stets", "sämtliche", "gesamte", "gesamten"]
)
#: Modal words of obligation: a claim's "must" needs one in the passage.
OBLIGATION = frozenset(["must", "required", "requires", "require", "mandatory", "obligated", "shall", "muss", "müssen"])
#: Hedges: a quote that has one about the claim's words needs one in the claim.
HEDGES = frozenset(
    ["may", "might", "can", "could", "often", "most", "some", "many", "typically", "generally", "usually", "tend", "tends", "likely", "possibly", "sometimes", "several", "frequently", "mainly", "mostly", "largely", "partly", "partially", "kann", "können", "meist", "oft", "häufig", "manche", "einige"]
)
#: Words that give a relation its direction (lemmas): a swap of roles around them matters.
DIRECTIONAL = frozenset(
    """
    outperform surpass exceed beat better worse higher lower larger smaller more less than
    before after precede follow cause lead result produce contain include subset imply
    greater fewer above below outscore top trail
    """.split()  # noqa: SIM905
)
# fmt: on
_PASSIVE = re.compile(r"\b(?:by|von|durch)\b")
_WORDS = re.compile(r"[^\W_]+(?:[.\-'][^\W_]+)*")


def _opposites(lemma: str, lexicon: Lexicon) -> set[str]:
    found = set(lexicon.antonyms(lemma))
    for a, b in OPPOSITES:
        if lemma in a:
            found |= b - a
        elif lemma in b:
            found |= a - b
    return found


def antonym_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """A claim word whose opposite is in the quote, the word itself not (see the module doc)."""
    quote_words = content_words(quote) + [w for w in normal(quote).split() if w in _DIR_WORDS]
    claim_words = content_words(claim) + [w for w in normal(claim).split() if w in _DIR_WORDS]
    passage = passage_lemmas(quote_words + content_words(context), lexicon)
    by_lemma: dict[str, str] = {}
    for w in quote_words:
        for lemma in lexicon.lemmas(w) | {w}:
            by_lemma.setdefault(lemma, w)
    reasons: list[Reason] = []
    for word in dict.fromkeys(claim_words):
        own = lexicon.lemmas(word) | {word}
        if own & passage:
            continue
        for lemma in own:
            if lexicon.related(lemma) & passage and not _opposites(lemma, lexicon) & passage:
                break
            clash = next((o for o in sorted(_opposites(lemma, lexicon)) if o in by_lemma), None)
            if clash is not None:
                reasons.append(
                    Reason(
                        "antonym",
                        f'the claim says "{word}" where the quote says "{by_lemma[clash]}"',
                        claim_says=word,
                        page_says=by_lemma[clash],
                    )
                )
                break
        else:
            continue
    return reasons


_DIR_WORDS = frozenset(w for pair in OPPOSITES for side in pair for w in side)


def _first(words: Sequence[str], wanted: frozenset[str]) -> str | None:
    return next((w for w in words if w in wanted), None)


def scope_reasons(claim: str, quote: str, context: str) -> list[Reason]:
    """Exclusive, universal or obligation words the passage lacks; a hedge the claim drops."""
    claim_tokens = normal(claim).split()
    claim_words = [w.strip(".,;:!?()\"'") for w in claim_tokens]
    quote_words = [w.strip(".,;:!?()\"'") for w in normal(quote).split()]
    passage = set(quote_words) | {w.strip(".,;:!?()\"'") for w in normal(context).split()}
    reasons: list[Reason] = []
    for group, code in ((EXCLUSIVE, "scope_widened"), (UNIVERSAL, "scope_widened")):
        word = _first(claim_words, group)
        if word is not None and not group & passage:
            reasons.append(
                Reason(
                    code,
                    f'the claim says "{word}", the quote has no such word',
                    claim_says=word,
                    page_says=_first(quote_words, HEDGES) or "",
                )
            )
            return reasons
    word = _first(claim_words, OBLIGATION)
    if word is not None and not OBLIGATION & passage:
        weak = _first(quote_words, HEDGES | frozenset({"should"}))
        reasons.append(
            Reason(
                "modality",
                f'the claim says "{word}" where the quote says "{weak or "nothing as strong"}"',
                claim_says=word,
                page_says=weak or "",
            )
        )
        return reasons
    hedge = _hedge_about(quote_words, set(content_words(claim)))
    if hedge is not None and not HEDGES & set(claim_words) and not EXCLUSIVE & set(claim_words):
        reasons.append(
            Reason(
                "hedge_dropped",
                f'the quote says "{hedge}", the claim states it without a hedge',
                claim_says="",
                page_says=hedge,
            )
        )
    return reasons


def _hedge_about(quote_words: Sequence[str], claim_words: set[str]) -> str | None:
    """A hedge of the quote whose next content word the claim has."""
    for k, word in enumerate(quote_words):
        if word not in HEDGES or word in ("can", "could", "several", "many", "some"):
            continue
        following = [w for w in quote_words[k + 1 : k + 4] if w and w not in HEDGES]
        if any(w in claim_words for w in following):
            return word
    return None


def _anchors(text: str, named: Sequence[str], values: Sequence[str]) -> list[tuple[str, int]]:
    """(anchor, token position) of the named terms and numbers in ``text``."""
    tokens = [t.casefold() for t in _WORDS.findall(text)]
    wanted = {n.casefold() for n in named} | {v.casefold() for v in values}
    return [(t, k) for k, t in enumerate(tokens) if t in wanted]


def role_reasons(claim: str, quote: str, shared: Sequence[str], lexicon: Lexicon) -> list[Reason]:
    """Two shared anchors in opposite order around a directional word both sides have."""
    claim_tokens = [t.casefold() for t in _WORDS.findall(claim)]
    quote_tokens = [t.casefold() for t in _WORDS.findall(quote)]
    claim_at = {a: k for a, k in reversed(_anchors(claim, shared, ()))}
    quote_at = {a: k for a, k in reversed(_anchors(quote, shared, ()))}
    common = [a for a in claim_at if a in quote_at]
    for i, a in enumerate(common):
        for b in common[i + 1 :]:
            if a == b or (claim_at[a] < claim_at[b]) == (quote_at[a] < quote_at[b]):
                continue
            c_lo, c_hi = sorted((claim_at[a], claim_at[b]))
            q_lo, q_hi = sorted((quote_at[a], quote_at[b]))
            c_dir = _directional(claim_tokens[c_lo:c_hi], lexicon)
            q_dir = _directional(quote_tokens[q_lo:q_hi], lexicon)
            passive = _PASSIVE.search(" ".join(claim_tokens[c_lo:c_hi])) or _PASSIVE.search(
                " ".join(quote_tokens[q_lo:q_hi])
            )
            if c_dir and q_dir and c_dir & q_dir and not passive:
                word = sorted(c_dir & q_dir)[0]
                return [
                    Reason(
                        "roles_swapped",
                        f'the claim puts "{a}" and "{b}" the other way round around "{word}"',
                        claim_says=" ".join(claim_tokens[c_lo : c_hi + 1]),
                        page_says=" ".join(quote_tokens[q_lo : q_hi + 1]),
                    )
                ]
    return []


def _directional(tokens: Sequence[str], lexicon: Lexicon) -> set[str]:
    found: set[str] = set()
    for t in tokens:
        lemmas = lexicon.lemmas(t) | {t}
        found.update(lemmas & DIRECTIONAL)
        for lemma in lemmas:
            found.update(lexicon.related(lemma) & DIRECTIONAL)
    return found


_EACH = re.compile(r"\b(?:each|per|every|apiece|jeweils|pro|je)\b")
_TOTAL = re.compile(r"\b(?:in total|total|altogether|combined|overall|all together|insgesamt)\b")


def number_scope_reasons(claim: str, quote: str, shared_numbers: Sequence[str]) -> list[Reason]:
    """ "Each"/"per" on one side, "in total" on the other, within a few words of a shared number."""
    reasons: list[Reason] = []
    claim_norm, quote_norm = normal(claim), normal(quote)
    for value in shared_numbers:
        c, q = _near(claim_norm, value), _near(quote_norm, value)
        if c is None or q is None:
            continue
        for mine, theirs in ((_TOTAL, _EACH), (_EACH, _TOTAL)):
            said, page = mine.search(c), theirs.search(q)
            if said and page and not mine.search(q):
                reasons.append(
                    Reason(
                        "number_scope",
                        f'the claim says "{said.group()} {value}" where the quote says '
                        f'"{page.group()}"',
                        claim_says=f"{said.group()} {value}",
                        page_says=page.group(),
                    )
                )
                return reasons
    return reasons


def _near(text: str, value: str) -> str | None:
    at = re.search(rf"(?<![\d.,]){re.escape(value)}(?![\d])", text)
    if at is None:
        return None
    return text[max(0, at.start() - 40) : at.end() + 40]
