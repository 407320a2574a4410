"""Named terms of a claim against the page: which it names, whether the page has them, and
whether the claim puts one of them where the quote has another.

The named-term checks of :func:`truthbase.cite.support.check_support` (``term_missing``,
``term_substituted``, ``term_outside_quote``). A named term is an acronym, a capitalized word
that does not start a sentence (titles such as "Mr" aside; none in German, which capitalizes
every noun), or a token with digits. The quote is read with the rest of its sentence
(:func:`quote_sentence`): a quote cut out of a sentence is about that sentence's subject.
"""

from __future__ import annotations

import re

from ..text.sentences import split_sentences
from .align import PREFIX, normal
from .model import Reason
from .numbers import TOKEN

__all__ = [
    "capitalizes_nouns",
    "named_terms",
    "quote_sentence",
    "sibling_term_reasons",
    "spelled_out",
    "term_present",
    "term_reasons",
    "term_shape",
]

# -- tokens (the token pattern and the numbers are in :mod:`.numbers`) -----------------------

#: Abbreviations before a name: the name after "Mr." does not start a sentence.
_TITLES = frozenset("mr mrs ms dr prof st sir lady lord herr frau".split())  # noqa: SIM905


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text)]


# -- named terms ----------------------------------------------------------------------------


#: German function words: in a text that has several, every noun is capitalized, so a
#: capital letter does not make a name.
_GERMAN = frozenset(
    "der die das und ist nicht ein eine mit von zu für dass sind wird den dem".split()  # noqa: SIM905
)


def capitalizes_nouns(text: str) -> bool:
    """``text`` reads as German (at least three distinct German function words)."""
    return len(_GERMAN & set(normal(text).split())) >= 3


def named_terms(text: str, *, german: bool | None = None) -> list[str]:
    """Acronyms, capitalized words that do not start a sentence, and tokens with digits (in
    German, where every noun is capitalized, acronyms and tokens with digits only)."""
    found: list[str] = []
    german = capitalizes_nouns(text) if german is None else german
    tokens = _tokens(text)
    for k, (token, start, _) in enumerate(tokens):
        bare = re.sub(r"['’]s$", "", token)
        if not bare:
            continue
        letters = [c for c in bare if c.isalpha()]
        previous = tokens[k - 1][0].casefold() if k else ""
        initial = k == 0 or (
            bool(re.search(r"[.!?:\"“(\[{]\s*$", text[:start])) and previous not in _TITLES
        )
        with_digits = any(c.isdigit() for c in bare) and bool(letters)
        acronym = len(letters) >= 2 and sum(c.isupper() for c in letters) >= 2
        acronym = acronym or bool(re.fullmatch(r"[a-z]-[a-z]{3,}", bare))  # k-means, n-gram
        name = len(letters) >= 2 and bare[0].isupper() and not initial and not german
        name = name or (german and _person(tokens, k, text))
        if (with_digits or acronym or name) and bare.casefold() not in _TITLES:
            found.append(bare)
    return found


def _capitalized(token: str) -> bool:
    return len(token) >= 2 and token[0].isupper() and token[1:].islower()


def _person(tokens: list[tuple[str, int, int]], k: int, text: str) -> bool:
    """In German, where every noun is capitalized: the second of two capitalized words in a
    row after a preposition or an adverb ("auf Hermann Weyl zurück", "erstmals Bernhard
    Riemann"): a person's name rather than a noun. A noun comes after its article, a number, a
    quantifier or an inflected adjective, and two nouns in a row after a conjunction are subject
    and object ("dass Organisationen Gefahren bewerten")."""
    if k < 2 or not _capitalized(tokens[k][0]) or not _capitalized(tokens[k - 1][0]):
        return False
    if text[tokens[k - 1][2] : tokens[k][1]] != " ":
        return False
    before = tokens[k - 2][0]
    starts = re.search(r"[.!?:\"“(\[{]\s*$", text[: tokens[k - 1][1]]) is not None
    if starts or not before.isalpha() or not before.islower() or before in _BEFORE_NOUNS:
        return False
    return not re.search(r"(?:e|en|er|es|em)$", before)  # an inflected adjective or article


#: Words a noun follows (articles, possessives, numbers, quantifiers) and conjunctions that open
#: a clause whose subject may be a noun.
_BEFORE_NOUNS = frozenset(
    """
    der die das den dem des ein eine einen einem einer eines kein keine keinen keinem jede
    jeder jedes jeden alle viele wenige einige manche mehrere beide zwei drei vier fünf sein
    seine ihr ihre unser unsere dass daß weil wenn ob da als obwohl damit sodass und oder aber
    sondern denn sowie
    """.split()  # noqa: SIM905
)


def term_present(term: str, haystack: str) -> bool:
    """The term as a whole word (a plural or possessive "s" allowed) in normalized text; a
    hyphenated term also with a space for its hyphen ("2000-token", "2000 tokens") or by its
    name part alone ("BERT-derived"); an acronym also spelled out ("IP", "intellectual
    property")."""
    norm = normal(term)
    forms = {norm, norm.rstrip("s"), norm.replace("-", " ")}
    head, _, rest = term.partition("-")
    if rest.islower() and rest.isalpha() and not head.islower():
        forms.add(normal(head))  # BERT-derived, AI-community: the name is what must be there
    for form in forms:
        if form and re.search(rf"(?<![^\W_]){re.escape(form)}(?:'?s)?(?![^\W_])", haystack):
            return True
    # A name joined to a noun ("Hausdorff-Eigenschaft", "Peano-Kurve") is named by the name
    # leading a word of the page: "hausdorffsch" names the first, nothing on it the second.
    joined_name = head[:1].isupper() and rest[:1].isupper() and head.isalpha()
    if joined_name and len(head) >= PREFIX:
        name = re.escape(normal(head))  # the whole name: "transformation" is no "Transformer"
        if re.search(rf"(?<![^\W_]){name}", haystack):
            return True
    if head.isdigit() and rest.isalpha() and len(rest) >= PREFIX + 2:
        # A number joined to a word is named by the number and the word's stem, whatever its
        # derivation: "3-Färbbarkeit" where the page says "3-färbbar" (the prefix rule the
        # alignment applies to any content word, align.PREFIX).
        joined = re.escape(f"{head}-{normal(rest)[:PREFIX]}")
        if re.search(rf"(?<![^\W_]){joined}", haystack):
            return True
    if multiple := _MULTIPLE.fullmatch(norm):
        # A factor in any of its spellings: "3.9-fold" where the page says "3.9x" or "3.9 times".
        number = re.escape(multiple.group(1))
        spelled = rf"(?<![\w.,]){number}(?:\s*-?\s*fold|[x×](?!\s*\d)|\s+times)(?![^\W_])"
        return re.search(spelled, haystack) is not None
    return bool(re.fullmatch(r"[A-Z]{2,6}s?", term)) and spelled_out(term, haystack)


#: What may come between the words an acronym's letters start: spaces and up to two function
#: words ("of the", "for", "on").
_SKIPPED = r"(?:of|for|the|and|on|in|to|at|der|des|die|für|und|von)"
_BETWEEN_INITIALS = rf"\s+(?:{_SKIPPED}\s+){{0,2}}(?!{_SKIPPED}\s)"
#: A factor written with its number: "3.9x", "3.9×", "3.9-fold" (normalized).
_MULTIPLE = re.compile(r"(\d+(?:[.,]\d+)?)(?:\s*-?\s*fold|[x×])")


def spelled_out(term: str, haystack: str) -> bool:
    """An acronym of two to six capitals (a plural "s" allowed: "KPIs"; lowercase as a slot
    word is, "rfi") whose letters start consecutive words of the text ("request for
    information"); in one of three letters or more, function words between them are left out
    as acronyms leave them out ("ACL": "Association for Computational Linguistics", "SOSP":
    "Symposium on Operating Systems Principles")."""
    found = re.fullmatch(r"([A-Z]{2,6})s?", term) or re.fullmatch(r"([a-z]{2,6})", term)
    if found is None:
        return False
    letters = found.group(1)
    ways = [r"\s+"]  # consecutive words, function words among them ("request for information")
    if len(letters) > 2:  # or function words left out, none of them an initial ("AI": none)
        ways.append(_BETWEEN_INITIALS)
    for between in ways:
        initials = between.join(rf"{c.casefold()}[^\W_]*" for c in letters)
        if re.search(rf"(?<![^\W_]){initials}(?![^\W_])", haystack):
            return True
    return False


def term_reasons(claim: str, quote: str, context: str, document: str = "") -> list[Reason]:
    """Named terms of the claim not on the page, or only in the context in place of a quote
    term of the same shape; a quote cut out of its sentence is read with that sentence ("For
    PopQA, we use the long-tail subset, consisting of ...": PopQA is what the quote is about)."""
    quote = quote_sentence(quote, context)
    haystack = normal(quote) + "\n" + normal(context)
    if document:
        haystack += "\n" + normal(document)  # "the CSF says", "the RAPTOR authors"
    own_names = normal(document)
    reasons: list[Reason] = []
    seen: set[str] = set()
    quote_norm = normal(quote)
    claim_norm = normal(claim)
    german = capitalizes_nouns(quote + " " + claim)
    dropped = [t for t in named_terms(quote, german=german) if not term_present(t, claim_norm)]
    for term in named_terms(claim, german=german):
        key = normal(term)
        if key in seen:
            continue
        seen.add(key)
        instead = next((t for t in dropped if term_shape(t) == term_shape(term)), None)
        if not term_present(term, haystack):
            reasons.append(
                Reason(
                    "term_missing",
                    f'"{term}" is not in the quote or its context',
                    claim_says=term,
                    page_says=instead or "",
                )
            )
        elif (
            not term_present(term, quote_norm)
            and instead is not None
            and not (own_names and term_present(term, own_names))
        ):
            # Only in the context: a substitution when a quote term of its shape is left out.
            reasons.append(
                Reason(
                    "term_substituted",
                    f'the claim has "{term}" where the quote has "{instead}"',
                    claim_says=term,
                    page_says=instead,
                )
            )
    return reasons


def term_shape(term: str) -> str:
    """A named term's shape: with digits, an acronym, or a name."""
    if any(c.isdigit() for c in term):
        return "digits"
    letters = [c for c in term if c.isalpha()]
    return "acronym" if sum(c.isupper() for c in letters) >= 2 else "name"


#: Normalized characters of a quote's head and tail that find its sentence in the context.
_ENDS = 40


def quote_sentence(quote: str, context: str) -> str:
    """The sentences of ``context`` the quote is part of (the quote when none is found): a
    fragment ("consisting of 1,399 rare entity queries") with the sentence it was cut from."""
    wanted = normal(quote)
    if not wanted or not context:
        return quote
    found = []
    for start, end in split_sentences(context):
        sentence = normal(context[start:end])
        if sentence and (
            sentence in wanted or wanted[:_ENDS] in sentence or wanted[-_ENDS:] in sentence
        ):
            found.append(context[start:end])
    return " ".join(found) if found else quote


_NAME_TOKEN = re.compile(r"[^\W_][\w\-]*")


def _words(text: str) -> list[str]:
    return [re.sub(r"['’]s$", "", w) for w in _NAME_TOKEN.findall(text)]


def sibling_term_reasons(claim: str, quote: str, context: str, document: str = "") -> list[Reason]:
    """A name of two words whose one word the quote has and whose other only the context has:
    "the Target Profiles" where the quote speaks of the "Community Profile" and the sentence
    before it of the Target Profile. The page tells the two apart; the quote is about the other.
    (A name only the context has, standing alone, is the quote's subject named where the quote
    says "it": no reason.)"""
    sentence = quote_sentence(quote, context)
    whole, around, own = normal(sentence), normal(context), normal(document)
    german = capitalizes_nouns(quote + " " + claim)
    named = set(named_terms(claim, german=german))
    words = _words(claim)
    for k, term in enumerate(words):
        if term not in named or term_present(term, whole) or not term_present(term, around):
            continue
        if own and term_present(term, own):
            continue
        for step in (-1, 1):
            if not 0 <= k + step < len(words):
                continue
            other = words[k + step]
            if other not in named or not term_present(other, whole):
                continue
            ours = f"{words[k - 1]} {term}" if step < 0 else f"{term} {other}"
            theirs = _partner(other, sentence, -step, german)
            if theirs is None:
                continue  # "DETECT Functions" for the quote's "DETECT": no other name of its kind
            return [
                Reason(
                    "term_outside_quote",
                    f'the claim has "{ours}" where the quote speaks of "{theirs}" ("{term}" is '
                    "on the page, outside the quote)",
                    claim_says=ours,
                    page_says=theirs,
                )
            ]
    return []


def _partner(word: str, sentence: str, step: int, german: bool) -> str | None:
    """The quote's name of two words with ``word`` on the same side: "Community Profile"."""
    named = set(named_terms(sentence, german=german))
    words = _words(sentence)
    key = normal(word).rstrip("s")
    for k, w in enumerate(words):
        if normal(w).rstrip("s") != key or not 0 <= k + step < len(words):
            continue
        if words[k + step] in named:
            return f"{words[k + step]} {w}" if step < 0 else f"{w} {words[k + step]}"
    return None
