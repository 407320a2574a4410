"""Vetoes for the slips language models make: each a named reason with the two sides.

A veto is a check no score overrides; :func:`truthbase.cite.support.check_support` runs these
after its number, negation and named-term checks. Each returns reasons carrying the claim's
words and the page's words that conflict, so the reader sees "the answer says after · the page
says before".

- ``antonym`` (polarity): a claim word whose opposite (WordNet's antonyms, and the directional
  pairs of :data:`OPPOSITES`: before/after, increase/decrease, higher/lower, ...) is in the quote
  while the word itself, or a synonym, is not.
- ``scope_widened``, ``modality`` and ``hedge_dropped`` (quantifier and modality scope): in
  :mod:`.scope` since session 32.
- ``roles_swapped`` (relation): two named terms or numbers that claim and quote share, or two
  words each says once (:func:`truthbase.cite.roles.shared_words`), stand in opposite order
  around a directional word ("outperforms", "higher than", "before", "kleiner als") that both
  have, with no passive "by" to turn the order round, and not around opposite words (that is
  the converse: "B less often than A" for "A more often than B").
- ``number_scope``: "each"/"per" on one side and "in total"/"altogether" on the other, next to
  the same number.
- bindings (issue 24, second round): a number bound to another named term than on the page
  (``roles_swapped``, :func:`number_binding_reasons`), a direction bound to the same thing the
  other way round (``antonym``, :func:`direction_binding_reasons`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from ..text.vocabulary import SUPPORT_STOP_WORDS
from .align import FRAMING, PREFIX, content_words, normal, passage_lemmas
from .lexicon import Lexicon
from .model import Reason
from .negation import is_cue

__all__ = [
    "OPPOSITES",
    "antonym_reasons",
    "binding_reasons",
    "cause_reasons",
    "direction_binding_reasons",
    "number_binding_reasons",
    "number_scope_reasons",
    "opposites",
    "possibility_reasons",
    "role_reasons",
    "side_of",
]

# fmt: off
#: Directional opposites WordNet does not list as antonyms: any word of one side against any
#: word of the other.
_OPPOSITE_SIDES = (
    ("before prior earlier preceding ahead precede",
     "after once following later subsequent follow afterwards"),
    ("increase raise rise grow improve gain higher more larger greater up",
     "decrease reduce lower fall shrink drop decline worsen degrade loss fewer less smaller down"),
    ("first", "last"), ("positive", "negative"), ("above over upper top", "below under bottom"),
    ("maximum", "minimum"), ("hard", "soft"), ("include including", "exclude outside"),
    ("input", "output"),
    ("early", "late"), ("vor vorher", "nach nachher"),
    ("höher größer mehr", "niedriger kleiner weniger"), ("offen", "abgeschlossen"),
    ("erhöhen", "senken"), ("require need must necessary", "avoid eliminate unnecessary"),
    ("single", "multiple several"), ("outperform outscore outdo surpass", "underperform trail"),
)
OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split())) for a, b in _OPPOSITE_SIDES
)
#: Words that give a relation its direction (lemmas): a swap of roles around them matters.
DIRECTIONAL = frozenset(
    """
    outperform surpass exceed beat better worse higher lower larger smaller more less than
    before after precede follow cause lead result produce contain include subset imply
    greater fewer above below outscore top trail grösser kleiner höher niedriger besser
    schlechter weniger
    """.split()  # noqa: SIM905
)
# fmt: on
#: Content words either side of two opposite words that must share one for them to clash: the
#: opposites are about the same thing ("raises MAUVE" / "lower MAUVE").
NEIGHBOURS = 4
_PASSIVE = re.compile(r"\b(?:by|von|durch)\b")
_WORDS = re.compile(r"[^\W_]+(?:[.\-'][^\W_]+)*")


def opposites(lemma: str, lexicon: Lexicon) -> frozenset[str]:
    """The opposites of a lemma: its WordNet antonyms and the other side of :data:`OPPOSITES`."""
    return _opposites_of(lemma, lexicon)


@lru_cache(maxsize=16384)
def _opposites_of(lemma: str, lexicon: Lexicon) -> frozenset[str]:
    found = set(lexicon.antonyms(lemma))
    for a, b in OPPOSITES:
        if lemma in a:
            found |= b - a
        elif lemma in b:
            found |= a - b
    return frozenset(found)


def side_of(lemma: str) -> set[str]:
    """``lemma`` and the words on its side of :data:`OPPOSITES`."""
    same = {lemma}
    for a, b in OPPOSITES:
        if lemma in a:
            same |= a
        elif lemma in b:
            same |= b
    return same


def _window(words: Sequence[str], k: int, lexicon: Lexicon) -> set[str]:
    near = list(words[max(0, k - NEIGHBOURS) : k]) + list(words[k + 1 : k + 1 + NEIGHBOURS])
    found: set[str] = set()
    for w in near:
        found |= lexicon.lemmas(w) | {w, w[:PREFIX]}
    return found


def antonym_reasons(claim: str, quote: str, context: str, lexicon: Lexicon) -> list[Reason]:
    """A claim word whose opposite the quote has about the same thing (a content word shared
    within :data:`NEIGHBOURS` of both), where the claim has nothing on the quote's side."""
    quote_words = [w for w in _WORDS.findall(normal(quote))]
    claim_words = [w for w in _WORDS.findall(normal(claim))]
    claim_lemmas = passage_lemmas(claim_words, lexicon)
    quote_lemmas = [lexicon.lemmas(w) | {w} for w in quote_words]
    every_quote_lemma = set().union(*quote_lemmas) if quote_lemmas else set()
    reasons: list[Reason] = []
    for i, word in enumerate(claim_words):
        own = lexicon.lemmas(word) | {word}
        if own & every_quote_lemma:
            continue  # the quote says it too: its opposite elsewhere is about something else
        for lemma in own:
            opposite = opposites(lemma, lexicon)
            if not opposite & every_quote_lemma:
                continue
            for j, theirs in enumerate(quote_words):
                if not quote_lemmas[j] & opposite or (j and is_cue(quote_words[j - 1])):
                    continue  # "not all" is no opposite of "some"
                agree: set[str] = set()
                for q in quote_lemmas[j]:
                    agree |= side_of(q) | set(lexicon.related(q))
                if agree & claim_lemmas:
                    continue  # the claim says the quote's side somewhere too
                shared = _window(claim_words, i, lexicon) & _window(quote_words, j, lexicon)
                if shared - _FUNCTION:
                    reasons.append(
                        Reason(
                            "antonym",
                            f'the claim says "{word}" where the quote says "{theirs}"',
                            claim_says=word,
                            page_says=theirs,
                        )
                    )
                    return reasons
    return reasons


#: Words a shared neighbourhood does not count.
_FUNCTION = SUPPORT_STOP_WORDS | FRAMING


_DIR_WORDS = frozenset(w for pair in OPPOSITES for side in pair for w in side)


def _anchors(text: str, named: Sequence[str], values: Sequence[str]) -> list[tuple[str, int]]:
    """(anchor, token position) of the named terms and numbers in ``text``."""
    tokens = [t.casefold() for t in _WORDS.findall(text)]
    wanted = {n.casefold() for n in named} | {v.casefold() for v in values}
    return [(t, k) for k, t in enumerate(tokens) if t in wanted]


def role_reasons(
    claim: str, quote: str, shared: Sequence[str], lexicon: Lexicon, *, strict: bool = False
) -> list[Reason]:
    """Two shared anchors in opposite order around a directional word both sides have (with
    ``strict``, a directional word as written or as a lemma, not one WordNet relates to it)."""
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
            c_dir = _directional(claim_tokens[c_lo:c_hi], lexicon, strict)
            q_dir = _directional(quote_tokens[q_lo:q_hi], lexicon, strict)
            passive = _PASSIVE.search(" ".join(claim_tokens[c_lo:c_hi])) or _PASSIVE.search(
                " ".join(quote_tokens[q_lo:q_hi])
            )
            converse = _opposed(claim_tokens[c_lo:c_hi], quote_tokens[q_lo:q_hi], lexicon)
            if c_dir and q_dir and c_dir & q_dir and not passive and not converse:
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


def _opposed(ours: Sequence[str], theirs: Sequence[str], lexicon: Lexicon) -> bool:
    """A word of ``ours`` is the opposite of one of ``theirs``: roles swapped around opposite
    words are the converse ("B less often than A" for "A more often than B")."""
    their_lemmas = passage_lemmas(theirs, lexicon)
    return any(
        opposites(lemma, lexicon) & their_lemmas for w in ours for lemma in lexicon.lemmas(w) | {w}
    )


def _directional(tokens: Sequence[str], lexicon: Lexicon, strict: bool = False) -> set[str]:
    found: set[str] = set()
    for t in tokens:
        lemmas = lexicon.lemmas(t) | {t}
        found.update(lemmas & DIRECTIONAL)
        if strict:
            continue
        for lemma in lemmas:
            found.update(lexicon.related(lemma) & DIRECTIONAL)
    return found


#: Words that state a cause or a consequence: a claim's "because" needs one in the passage.
#: "So that" states a purpose, not a cause ("published so that organizations can" for "published
#: to address"): left out.
_CAUSAL = re.compile(
    r"\b(?:because|since|due to|owing to|as a result|therefore|thus|hence|leads? to|"
    r"led to|results? in|causes?|caused|weil|deshalb|daher|wegen|führt|da|denn)\b"
)
#: Causal words that conclude rather than give a cause ("might therefore differ", "werden
#: deshalb nicht erklärt"): an inference's marker, no cause the page must state.
_CONCLUDING = frozenset("therefore thus hence deshalb daher".split())  # noqa: SIM905


def cause_reasons(claim: str, quote: str, context: str) -> list[Reason]:
    """A cause the claim gives where neither quote nor context states any (an added fact: "...
    because NIST lacks the authority")."""
    said = next((m for m in _CAUSAL.finditer(normal(claim)) if m.group() not in _CONCLUDING), None)
    if said is None or _CAUSAL.search(normal(quote)) or _CAUSAL.search(normal(context)):
        return []
    return [
        Reason(
            "cause_added",
            f'the claim says "{said.group()}", the quote gives no cause',
            claim_says=said.group(),
        )
    ]


def binding_reasons(claim: str, quote: str, named: Sequence[str]) -> list[Reason]:
    """A number the claim gives to another named term than the quote does: "CoLT5 XL's 55.7%"
    where no named term near 55.7 in the quote is CoLT5 XL. Only a possessive right before the
    number binds on the claim's side (the reading nobody disputes); on the quote's side any
    shared named term :data:`BINDING_REACH` tokens before it or :data:`BINDING_AFTER` after."""
    names = {n.casefold() for n in named}
    claim_tokens = [t.casefold() for t in _WORDS.findall(normal(claim))]
    quote_tokens = [t.casefold() for t in _WORDS.findall(normal(quote))]
    for k, token in enumerate(claim_tokens):
        if not re.fullmatch(r"\d+(?:[.,]\d+)?", token) or token not in quote_tokens:
            continue
        owner = next(
            (
                t[:-2]
                for t in claim_tokens[max(0, k - 2) : k]
                if t.endswith("'s") and t[:-2] in names
            ),
            None,
        )
        if owner is None:
            continue
        at = quote_tokens.index(token)
        near = {
            t.removesuffix("'s")
            for t in quote_tokens[max(0, at - BINDING_REACH) : at + 1 + BINDING_AFTER]
        }
        holders = sorted(near & names)
        if owner not in near and holders:
            return [
                Reason(
                    "roles_swapped",
                    f'the claim gives {token} to "{owner}", the quote to "{holders[0]}"',
                    claim_says=f"{owner} {token}",
                    page_says=f"{holders[0]} {token}",
                )
            ]
    return []


_JOINERS = frozenset(", and or und oder sowie".split())  # noqa: SIM905
#: Words and the breaks a list of names ends at (a sentence's end too).
_LIST_TOKENS = re.compile(rf"{_WORDS.pattern}|[,;:.!?]")


def _groups(text: str, named: set[str]) -> list[list[tuple[str, ...]]]:
    """The lists of names of ``text``: items (a name of one or more words, "Risk Informed")
    joined by commas, "and", "or" ("GOVERN, IDENTIFY, PROTECT, and DETECT"); a name alone is
    a list of one item."""
    groups: list[list[tuple[str, ...]]] = []
    item: list[str] = []
    joined = False  # only joiners since the last item
    for token in [*_LIST_TOKENS.findall(normal(text)), "."]:
        word = token.removesuffix("'s")
        if word in named:
            item.append(word)
            continue
        if item:
            if joined:
                groups[-1].append(tuple(item))
            else:
                groups.append([tuple(item)])
            item = []
            joined = token in _JOINERS
        else:
            joined = joined and token in _JOINERS
    return groups


def group_binding_reasons(
    claim: str, quote: str, named: Sequence[str], quote_named: Sequence[str]
) -> list[Reason]:
    """The claim lists together names the quote puts in separate lists, where both sides
    divide the names into lists ("DETECT and RESPOND should be ready at all times, while
    GOVERN, IDENTIFY and PROTECT run continuously" for "GOVERN, IDENTIFY, PROTECT, and DETECT
    should all happen continuously, and RESPOND and RECOVER should be ready at all times"). A
    claim that splits one of the quote's lists is left alone: it may say the same of each.
    ``named``: the claim's named terms the quote has; ``quote_named``: all the quote's."""
    names = {n.casefold() for n in named}
    ours = [g for g in _groups(claim, names) if len(g) > 1]
    theirs = [g for g in _groups(quote, {n.casefold() for n in quote_named}) if len(g) > 1]
    if len(ours) < 2 or len(theirs) < 2:
        return []
    # a word of two items on either side ("AI" of "National AI Initiative" and "AI RMF") says
    # nothing of where one item goes
    counts = Counter(w for g in ours + theirs for item in g for w in set(item))
    once = {w for w, n in counts.items() if n <= 2 and w in names}
    home = {w: k for k, group in enumerate(theirs) for item in group for w in item if w in once}
    for group in ours:
        placed = sorted({w for item in group for w in item if w in home})
        for a in placed:
            for b in placed:
                if home[a] < home[b]:
                    return [
                        Reason(
                            "roles_swapped",
                            f'the claim lists "{a}" with "{b}", the quote lists them apart',
                            claim_says=", ".join(" ".join(i) for i in group),
                            page_says=" / ".join(", ".join(" ".join(i) for i in g) for g in theirs),
                        )
                    ]
    return []


#: Tokens before and after a number of the quote among which its named term is found (a
#: subject comes before its number: "RAPTOR ... with a 55.7% F-1 score").
BINDING_REACH = 8
BINDING_AFTER = 3


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


# -- bindings: which number, which direction goes with which term ----------------------------

#: Tokens either side of a named term within which a number is bound to it ("Tier 2", "100
#: tokens in the ALCE paper"), and of a shared word within which a direction is bound to it
#: ("raises MAUVE", "lower MAUVE scores").
BIND_REACH = 5
DIRECTION_REACH = 2
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
#: Punctuation and coordinators a binding does not reach across ("Partial (Tier 1), Risk
#: Informed (Tier 2)": 1 is not Risk Informed's; "Silver is Level 2 and Gold is Level 3").
_BREAK = "|"
_COORDINATORS = frozenset("and or but while whereas und oder aber".split())  # noqa: SIM905
_WORDS_AND_BREAKS = re.compile(rf"{_WORDS.pattern}|[,;:]")


def _bind_tokens(text: str) -> list[str]:
    return [
        _BREAK if t in ",;:" or t in _COORDINATORS else t.removesuffix("'s")
        for t in _WORDS_AND_BREAKS.findall(normal(text))
    ]


def _nearest_numbers(tokens: Sequence[str], at: int) -> set[str]:
    """The numbers nearest to ``tokens[at]`` within :data:`BIND_REACH` and its stretch between
    punctuation marks (several on a tie)."""
    best: dict[int, set[str]] = {}
    for step in (-1, 1):
        for distance in range(1, BIND_REACH + 1):
            k = at + step * distance
            if not 0 <= k < len(tokens) or tokens[k] == _BREAK:
                break
            if _NUMBER.fullmatch(tokens[k]):
                best.setdefault(distance, set()).add(tokens[k])
    return best[min(best)] if best else set()


def number_binding_reasons(claim: str, quote: str, named: Sequence[str]) -> list[Reason]:
    """A shared named term whose nearest number in the claim is, in the quote, the number of
    none of its mentions while another number of the claim is ("Tier 2 is called Repeatable"
    where the page has "Repeatable (Tier 3)"). A name with two numbers equally near in the
    claim binds neither."""
    claim_tokens, quote_tokens = _bind_tokens(claim), _bind_tokens(quote)
    claim_numbers = {t for t in claim_tokens if _NUMBER.fullmatch(t)}
    for name in dict.fromkeys(n.casefold() for n in named):
        on_page: set[str] = set()
        for k, token in enumerate(quote_tokens):
            if token == name:
                on_page |= _nearest_numbers(quote_tokens, k)
        for k, token in enumerate(claim_tokens):
            if token != name:
                continue
            bound = _nearest_numbers(claim_tokens, k)
            if len(bound) != 1:
                continue
            value = next(iter(bound))
            other = sorted(on_page & claim_numbers)
            if value in quote_tokens and other and value not in on_page:
                return [
                    Reason(
                        "roles_swapped",
                        f'the claim gives {value} to "{name}", the quote gives it {other[0]}',
                        claim_says=f"{name} {value}",
                        page_says=f"{name} {other[0]}",
                    )
                ]
    return []


def _family_side(lemmas: set[str]) -> tuple[int, int] | None:
    """(pair, side) of the first directional pair of :data:`OPPOSITES` a word is on."""
    for k, pair in enumerate(OPPOSITES):
        for side, words in enumerate(pair):
            if lemmas & words:
                return k, side
    return None


def direction_binding_reasons(claim: str, quote: str, lexicon: Lexicon) -> list[Reason]:
    """A direction the claim gives a word ("raises MAUVE") that the quote gives the same word
    only the other way ("lower MAUVE"): the direction up to :data:`DIRECTION_REACH` tokens
    before the word it bears on (its object: "raises X", "lower X"), on both sides, with no
    word of the claim's side before that word in the quote. This catches directions traded
    between two things, which the antonym check leaves alone because the claim says both
    directions somewhere."""
    claim_words = _WORDS.findall(normal(claim))
    quote_words = _WORDS.findall(normal(quote))
    claim_lemmas = [lexicon.lemmas(w) | {w} for w in claim_words]
    quote_lemmas = [lexicon.lemmas(w) | {w} for w in quote_words]
    quote_sides = [_family_side(set(q)) for q in quote_lemmas]
    for i, word in enumerate(claim_words):
        found = _family_side(set(claim_lemmas[i]))
        if found is None:
            continue
        pair, side = found
        for n in range(i + 1, min(len(claim_words), i + DIRECTION_REACH + 1)):
            near = claim_lemmas[n]
            if claim_words[n] in _FUNCTION or _family_side(set(near)) is not None:
                continue
            sides: set[int] = set()
            theirs = ""
            for j, lemmas in enumerate(quote_lemmas):
                if not lemmas & near:
                    continue
                for m in range(max(0, j - DIRECTION_REACH), j):
                    there = quote_sides[m]
                    if there is not None and there[0] == pair:
                        sides.add(there[1])
                        theirs = theirs or quote_words[m]
            if sides == {1 - side}:
                return [
                    Reason(
                        "antonym",
                        f'the claim says "{word} {claim_words[n]}" where the quote says '
                        f'"{theirs} {claim_words[n]}"',
                        claim_says=f"{word} {claim_words[n]}",
                        page_says=theirs,
                    )
                ]
    return []


# -- possibility denied: "cannot" where the page says "may" ----------------------------------

_DENIED = re.compile(
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to|kann nicht|können nicht|"
    r"nicht möglich)\b"
)
_POSSIBLE = re.compile(r"\b(?:can|could|may|might|kann|können|darf|dürfen)\b")


def possibility_reasons(claim: str, quote: str) -> list[Reason]:
    """The claim denies a possibility ("cannot help pursue positive opportunities") that the
    quote grants with no negation of its own ("may also support taking advantage of positive
    opportunities"), about a content word both have after the modal (``modality``)."""
    claim_norm, quote_norm = normal(claim), normal(quote)
    denied = _DENIED.search(claim_norm)
    granted = _POSSIBLE.search(quote_norm)
    if denied is None or granted is None:
        return []
    if any(is_cue(w) for w in _WORDS.findall(quote_norm)):
        return []
    after_claim = set(content_words(re.split(r"[,;:.!?]", claim_norm[denied.end() :])[0]))
    after_quote = content_words(quote_norm[granted.end() :])
    shared = [w for w in after_quote if w in after_claim]
    if not shared:
        return []
    return [
        Reason(
            "modality",
            f'the claim says "{denied.group()}" where the quote says "{granted.group()}"',
            claim_says=f"{denied.group()} … {shared[0]}",
            page_says=granted.group(),
        )
    ]
