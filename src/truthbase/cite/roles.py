"""Who does what: a cause traded for its effect, a term put in another term's slot.

Two vetoes of :func:`truthbase.cite.support.check_support` (issue 24, third round) for claims
whose words are all on the page but in the wrong places:

- ``cause_swapped`` (relation): claim and quote both state a cause ("X because Y", "Y leads to
  X", "X is caused by Y"), and the claim's cause says what the quote's effect says while its
  effect says what the quote's cause says ("failures cannot be eliminated because organizations
  try to remove risk" for "trying to remove risk is counterproductive because failures cannot
  be eliminated").
- ``term_substituted`` (entity swap): a word of the claim next to a word both sides share (its
  slot: "statistical, and ...", "the ... kiln") is nowhere on the page, and the quote has in
  that slot a word the claim does not have, both terms of one shape (a name, letters with
  digits, a hyphenated compound): "statistical, and societal-demographic" for "statistical,
  and human-cognitive". A reworded slot (a synonym, a derived form) is no substitution. A name
  with digits in the quote's slot ("GPT-4-based predictions") that the claim drops altogether
  for words the page nowhere has ("the judgments of human annotators") is one: the claim names
  something else where the page names a model (a bare name or acronym is not: a claim may
  spell it out, "a model" for "an LM"). A
  lowercase word of the page's context in the slot ("tree traversal approach" for "collapsed
  tree approach") was tried as a rival term too: the one-sentence context rarely holds the
  rival, and ordinary words of the context were taken for one (six paraphrases lost).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..text.vocabulary import QUERY_STOP_WORDS, SUPPORT_STOP_WORDS, stem
from .align import FRAMING, PHRASE_WORD, PREFIX, normal
from .lexicon import Lexicon
from .model import Reason
from .negation import negations
from .scope import HEDGES
from .terms import spelled_out
from .vetoes import OPPOSITES

__all__ = [
    "ANCHOR_LETTERS",
    "LIST_REACH",
    "SLOT_REACH",
    "PageWords",
    "cause_swap_reasons",
    "condition_swap_reasons",
    "converse_reasons",
    "list_binding_reasons",
    "page_words",
    "ratio_reasons",
    "shared_words",
    "slot_swap_reasons",
]

#: Markers after which the cause comes ("X because Y") and after which the effect comes ("Y
#: leads to X"); "so that" states a purpose and is neither.
_CAUSE_FOLLOWS = re.compile(
    r"\b(?:because(?: of)?|since|due to|owing to|as a result of|caused by|driven by|"
    r"weil|wegen|aufgrund)\b"
)
_EFFECT_FOLLOWS = re.compile(
    r"\b(?:therefore|thus|hence|so|leads? to|led to|results? in|resulted in|causes?|caused|"
    r"deshalb|daher|darum|führt zu|führen zu)\b"
)
_WORD = PHRASE_WORD
#: Words that are no content of a slot ("physical ones", "physical in nature"; a hedge for a
#: hedge, "usually" for "generally", is the scope check's).
_EMPTY = SUPPORT_STOP_WORDS | QUERY_STOP_WORDS | FRAMING | HEDGES | {"one", "ones", "nature"}


@dataclass(frozen=True, slots=True)
class PageWords:
    """What a passage says, word by word: stems, lemmas, and the lemmas related to those."""

    @staticmethod
    def content(text: str) -> list[str]:
        """The content words of ``text`` (normalized; function and framing words, numbers out)."""
        return _content(text)

    stems: frozenset[str]
    lemmas: frozenset[str]
    related: frozenset[str]
    #: The content words' initials in order ("ip" in "intellectual property") and the first
    #: :data:`~truthbase.cite.align.PREFIX` letters of the long ones ("projektive").
    initials: str = ""
    prefixes: frozenset[str] = frozenset()

    def says(self, word: str, lexicon: Lexicon, *, strict: bool = False) -> bool:
        """``word`` is in the passage as written, as a lemma, or (unless ``strict``) as a
        lemma related to one of the passage's (a synonym, a derived form); a hyphenated word
        is when its first part is."""
        own = lexicon.lemmas(word) | {word}
        if stem(f"{word}s") in self.stems or (word.endswith("s") and word[:-1] in self.stems):
            return True  # a plural the stemmer leaves alone: "api" and "apis"
        if "-" in word and stem(word.split("-")[0]) in self.stems:
            return True  # "steam-powered" for "steam-driven"
        if len(word) >= PREFIX + 2 and word[:PREFIX] in self.prefixes:
            return True  # an inflected form: "projektiven", "projektive"
        if 2 <= len(word) <= 6 and word.isalpha() and word in self.initials:
            return True  # an acronym spelled out: "ip", "intellectual property"
        if 3 <= len(word) <= 7 and word.endswith("s") and word[:-1] in self.initials:
            return True  # and its plural: "kpis", "key performance indicators"
        if strict:
            return stem(word) in self.stems or bool(own & self.lemmas)
        return (
            stem(word) in self.stems
            or bool(own & self.lemmas)
            or bool(own & self.related)
            or any(lexicon.related(lemma) & self.lemmas for lemma in own)
        )


def page_words(text: str, lexicon: Lexicon) -> PageWords:
    """What ``text`` says (its content words)."""
    return _passage(_content(text), lexicon)


def _passage(words: Sequence[str], lexicon: Lexicon) -> PageWords:
    """What ``words`` say; a hyphenated word says its head and its parts too ("GPT-4" of
    "GPT-4-based", "first" and "aid" of "first-aid")."""
    compounds = [w for w in words if "-" in w]
    words = [
        *words,
        *(w.rsplit("-", 1)[0] for w in compounds),
        *(p for w in compounds for p in w.split("-") if len(p) > 1),
    ]
    lemmas: set[str] = set(words)
    for w in words:
        lemmas |= lexicon.lemmas(w)
    related: set[str] = set()
    for lemma in lemmas:
        related |= lexicon.related(lemma)
    return PageWords(
        frozenset(stem(w) for w in words),
        frozenset(lemmas),
        frozenset(related),
        initials="".join(w[0] for w in words if w[0].isalpha()),
        prefixes=frozenset(w[:PREFIX] for w in words if len(w) >= PREFIX + 2),
    )


def _content(text: str) -> list[str]:
    words = (w.removesuffix("'s") for w in _WORD.findall(normal(text)))  # "XL's score": "xl"
    return [w for w in words if w and w not in _EMPTY and not w.isdigit()]


def _cause_and_effect(text: str) -> tuple[str, str, str] | None:
    """(cause, effect, marker) of the first causal marker of ``text``'s sentence, or None."""
    norm = normal(text)
    for pattern, cause_after in ((_CAUSE_FOLLOWS, True), (_EFFECT_FOLLOWS, False)):
        found = pattern.search(norm)
        if found is None:
            continue
        before, after = norm[: found.start()], norm[found.end() :]
        if not _content(before) or not _content(after):
            continue
        return (after, before, found.group()) if cause_after else (before, after, found.group())
    return None


def _shared(words: Sequence[str], passage: PageWords, lexicon: Lexicon) -> int:
    return sum(passage.says(w, lexicon) for w in dict.fromkeys(words))


def _crossed(claim_pair: Sequence[str], quote_pair: Sequence[str], lexicon: Lexicon) -> bool:
    """Whether each half of the claim's pair shares more words with the other half of the
    quote's pair than with its own: the two roles traded places."""
    first, second = _content(claim_pair[0]), _content(claim_pair[1])
    q_first = _passage(_content(quote_pair[0]), lexicon)
    q_second = _passage(_content(quote_pair[1]), lexicon)
    return _shared(first, q_second, lexicon) > _shared(first, q_first, lexicon) and _shared(
        second, q_first, lexicon
    ) > _shared(second, q_second, lexicon)


def cause_swap_reasons(claim: str, quote: str, lexicon: Lexicon) -> list[Reason]:
    """The claim's cause is the quote's effect and its effect the quote's cause (module doc):
    each half of the claim shares more words with the other half of the quote than with its
    own."""
    mine, theirs = _cause_and_effect(claim), _cause_and_effect(quote)
    if mine is None or theirs is None:
        return []
    if not _crossed(mine[:2], theirs[:2], lexicon):
        return []
    return [
        Reason(
            "cause_swapped",
            "the claim gives the quote's effect as the cause and its cause as the effect",
            claim_says=f"{mine[2]} {mine[0].strip()}",
            page_says=f"{theirs[2]} {theirs[0].strip()}".strip(" ."),
        )
    ]


#: A condition's opening word; "only if", "even if", "as if", "nur wenn", "auch wenn" are no
#: plain condition ("A only if B" states B of A) and are left alone.
_IF = r"(?:if|whenever|wenn|falls|sofern)"
_NOT_PLAIN_IF = re.compile(r"\b(?:only|even|as|nur|auch|selbst)\s+" + _IF + r"\b")
#: "if A, (then) B", "wenn A, (dann|so) B": the condition first.
_IF_FIRST = re.compile(
    rf"(?:^|[,:;]\s*){_IF}\b(?P<condition>.+?),\s*(?:then\s+|dann\s+|so\s+)?(?P<consequence>.+)"
)
#: "B if A", "B, wenn A": the consequence first (the cue found, then the sentence cut there:
#: a leading lazy group would be tried from every position).
_IF_AFTER = re.compile(rf",?\s+{_IF}\b")
#: A definition ("X heißt P, wenn ...", "is called compact if") or an equivalence ("genau
#: dann, wenn", "if and only if"): its condition goes both ways.
_BOTH_WAYS = re.compile(
    r"\b(?:heißt|heisst|heissen|heißen|nennt man|nennen wir|is called|are called|"
    r"is said to be|we say|"
    r"is defined|are defined|definiert|genau dann|if and only if|iff|exactly when|"
    r"precisely when)\b"
)
#: A German condition without "wenn": the verb first, then ", so" or ", dann" ("Ist X
#: hausdorffsch, so hat jede Folge ..."), after an opening like "Laut Skript gilt:".
_VERB_FIRST = re.compile(r"(?:^|:\s*)(?P<condition>[^,:]+?),\s*(?:so|dann)\s+(?P<consequence>.+)")
#: A supposition and its conclusion in the next sentence ("Es sei X ... . Dann gibt es ...").
_SUPPOSE_THEN = re.compile(
    r"(?:^|[.:]\s+)(?:es sei|sei|seien|let|suppose|assume)\b(?P<condition>[^.]+)\.\s+"
    r"(?:dann|then)\b(?P<consequence>.+)"
)


def _condition_and_consequence(text: str) -> tuple[str, str] | None:
    """(condition, consequence) of the first sentence of ``text`` that states one (or of a
    supposition and the conclusion after it), or None."""
    norm = normal(text)
    found = _SUPPOSE_THEN.search(norm)
    if found and _content(found["condition"]) and _content(found["consequence"]):
        return found["condition"], found["consequence"]
    for sentence in re.split(r"(?<=[.!?])\s+", norm):
        if _NOT_PLAIN_IF.search(sentence):
            continue
        for pattern in (_IF_FIRST, _VERB_FIRST):
            found = pattern.search(sentence)
            if found and _content(found["condition"]) and _content(found["consequence"]):
                return found["condition"], found["consequence"]
        cue = _IF_AFTER.search(sentence)
        if cue is not None:
            consequence, condition = sentence[: cue.start()], sentence[cue.end() :]
            if _content(condition) and _content(consequence):
                return condition, consequence
    return None


def condition_swap_reasons(claim: str, quote: str, lexicon: Lexicon) -> list[Reason]:
    """The claim states the quote's conditional the other way round ("if every sequence has
    at most one limit, X is Hausdorff" for "if X is Hausdorff, every sequence has at most one
    limit"): each half of the claim shares more words with the other half of the quote than
    with its own. A claim that negates both halves ("if not B, then not A") is the
    contrapositive, which is the same statement; it is left alone, and so is a quote whose
    condition goes both ways (a definition: "X heißt hausdorffsch, wenn ...")."""
    if len(negations(claim)) > len(negations(quote)) or _BOTH_WAYS.search(normal(quote)):
        return []
    mine, theirs = _condition_and_consequence(claim), _condition_and_consequence(quote)
    if mine is None or theirs is None or not _crossed(mine, theirs, lexicon):
        return []
    return [
        Reason(
            "condition_swapped",
            "the claim makes the quote's consequence the condition and its condition the "
            "consequence",
            claim_says=f"if {mine[0].strip()}",
            page_says=f"if {theirs[0].strip()}",
        )
    ]


#: Content words either side of a shared word that make its slot.
SLOT_REACH = 2
#: Function words a slot may reach across ("agreement with the judgments of ...").
_SKIP = 3


def _slot(words: Sequence[str], at: int, step: int) -> list[str]:
    """Up to :data:`SLOT_REACH` content words next to ``words[at]`` in direction ``step``,
    across at most :data:`_SKIP` function words, not across punctuation (but for the comma
    before a list's last item)."""
    found: list[str] = []
    skipped = 0
    k = at + step
    while 0 <= k < len(words) and len(found) < SLOT_REACH:
        w = words[k]
        after = words[k + step] if 0 <= k + step < len(words) else ""
        if w == "," and after in _LAST_ITEM:
            k += step  # the last item of a list: "statistical, and human-cognitive"
            continue
        if w in ",;:.()":
            break
        if w in _EMPTY or w.isdigit():
            skipped += 1
            if skipped > _SKIP:
                break
        else:
            found.append(w)
        k += step
    return found


_LAST_ITEM = frozenset("and or und oder".split())  # noqa: SIM905
_TOKENS = re.compile(rf"{_WORD.pattern}|[,;:.()]")


def _shape(word: str, original: str, german: bool) -> str | None:
    """A term's shape: ``digits`` (letters and digits), ``compound`` (two words of four letters
    or more joined by a hyphen), ``name`` (not in German, which capitalizes every noun: a
    capitalized word inside a sentence of ``original``, the text as written); None for a word."""
    if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return "digits"
    parts = word.split("-")
    if len(parts) >= 2 and all(len(p) >= 4 and p.isalpha() for p in parts[:2]):
        return "compound"
    if german:
        return None
    for found in re.finditer(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", original, re.IGNORECASE):
        initial = re.search(r"(?:^|[.!?:\"“(])\s*$", original[: found.start()]) is not None
        if found.group()[0].isupper() and not initial:
            return "name"
    return None


def _listed(words: Sequence[str], at: int) -> bool:
    """``words[at]`` ends an item of a list that goes on with its last item: a comma among the
    three tokens before it, "and"/"or" (after a comma or not) right after it."""
    after = [w for w in words[at + 1 : at + 3] if w != ","][:1]
    return "," in words[max(0, at - 3) : at] and bool(after) and after[0] in _LAST_ITEM


def _written_with_capital(word: str, text: str) -> bool:
    pattern = rf"(?<![^\W_]){re.escape(word)}(?![^\W_])"
    return any(
        any(c.isupper() for c in m.group()) for m in re.finditer(pattern, text, re.IGNORECASE)
    )


def _dropped_name(
    gone: Sequence[str], quote: str, claim: str, named: set[str], german: bool
) -> bool:
    """A word of the quote's slot is a name with digits ("GPT-4-based"), written with a capital,
    not the document's own, and the claim has neither it nor its name part ("GPT" of
    "GPT-4-based")."""
    said = normal(claim)
    for word in gone:
        if _shape(word, quote, german) != "digits":
            continue  # a bare name or acronym is often spelled out ("an LM": "a model")
        if not _written_with_capital(word, quote) or stem(word) in named:
            continue
        part = word.split("-")[0]
        if not re.search(rf"(?<![^\W_]){re.escape(part)}(?![^\W_])", said):
            return True
    return False


def slot_swap_reasons(
    claim: str,
    quote: str,
    context: str,
    lexicon: Lexicon,
    *,
    document: str = "",
    german: bool = False,
) -> list[Reason]:
    """A term of the claim in the slot where the quote has another term of the same shape (module
    doc), the claim's nowhere on the page (quote, context, the document's naming text)."""
    claim_tokens = [t.removesuffix("'s") for t in _TOKENS.findall(normal(claim))]
    quote_norm = normal(quote)
    quote_tokens = _TOKENS.findall(quote_norm)
    page = _passage(_content(quote), lexicon)
    said = _passage(_content(claim), lexicon)
    named = {stem(w) for w in _content(document)}
    around = {stem(w) for w in _content(context)}
    for i, anchor in enumerate(claim_tokens):
        if anchor in _EMPTY or stem(anchor) not in page.stems:
            continue
        for j, theirs in enumerate(quote_tokens):
            if stem(theirs) != stem(anchor):
                continue
            for step in (-1, 1):
                new = [
                    w
                    for w in _slot(claim_tokens, i, step)
                    if not page.says(w, lexicon) and not spelled_out(w, quote_norm)
                ]
                gone = [
                    w
                    for w in _slot(quote_tokens, j, step)
                    if not said.says(w, lexicon, strict=True)
                ]
                unseen = [w for w in new if stem(w) not in around | named]
                shapes = {_shape(w, quote, german) for w in gone} - {None}
                shaped = next((w for w in unseen if _shape(w, claim, german) in shapes), None)
                if shaped is None and new and unseen == new:
                    shaped = new[0] if _dropped_name(gone, quote, claim, named, german) else None
                if step > 0 and new and unseen == new and _listed(claim_tokens, i):
                    shaped = shaped or (new[0] if _listed(quote_tokens, j) else None)
                if not gone or shaped is None:
                    continue
                ours = " ".join(new if step > 0 else new[::-1])
                page_side = " ".join(gone if step > 0 else gone[::-1])
                return [
                    Reason(
                        "term_substituted",
                        f'the claim has "{ours}" where the quote has "{page_side}" next to '
                        f'"{anchor}"',
                        claim_says=ours,
                        page_says=page_side,
                    )
                ]
    return []


#: Words after a claim's word within which the first directional word binds it ("enhancing and
#: sharing as responses to negative risks"): in the claim up to a comma or a contrast, on the
#: page across the commas of a list ("realizing, sharing, enhancing, or accepting positive").
LIST_REACH = 8
_PUNCTUATION = frozenset(";:.()")
_CONTRAST = frozenset("but while whereas although however though aber".split())  # noqa: SIM905
_CLAIM_STOPS = _PUNCTUATION | _CONTRAST | {","}
_PAGE_STOPS = _PUNCTUATION | _CONTRAST
_LISTING = frozenset(", and or und oder".split())  # noqa: SIM905


def _side(word: str, lexicon: Lexicon) -> tuple[int, int] | None:
    lemmas = lexicon.lemmas(word) | {word}
    for k, pair in enumerate(OPPOSITES):
        for side, words in enumerate(pair):
            if lemmas & words:
                return k, side
    return None


def _bound(
    words: Sequence[str], at: int, stops: frozenset[str], lexicon: Lexicon
) -> tuple[int, int, str] | None:
    """(pair, side, word) of the first directional word after ``words[at]`` when ``words[at]``
    is an item of a list that goes with it (a comma, "and" or "or" on the way)."""
    seen = 0
    listed = False
    for w in words[at + 1 :]:
        if w in stops:
            return None
        listed = listed or w in _LISTING
        if w == ",":
            continue
        seen += 1
        if seen > LIST_REACH:
            return None
        side = _side(w, lexicon)
        if side is not None:
            return (*side, w) if listed else None
    return None


def _head(words: Sequence[str], at: int, lexicon: Lexicon) -> bool:
    """``words[at]`` comes right after a directional word ("negative risks"): it is the head
    the lists go with, not an item."""
    return at > 0 and _side(words[at - 1], lexicon) is not None


def list_binding_reasons(claim: str, quote: str, lexicon: Lexicon) -> list[Reason]:
    """A word of the quote that the claim lists with one side of a directional pair ("enhancing
    and sharing as responses to negative risks") while every mention of it on the page is
    listed with the other side ("realizing, sharing, enhancing, or accepting positive risks"):
    items traded between two lists (``roles_swapped``)."""
    claim_tokens = _TOKENS.findall(normal(claim))
    quote_tokens = _TOKENS.findall(normal(quote))
    for i, word in enumerate(claim_tokens):
        if word in _EMPTY or word in _CLAIM_STOPS or _side(word, lexicon) is not None:
            continue
        mine = _bound(claim_tokens, i, _CLAIM_STOPS, lexicon)
        mentions = [j for j, t in enumerate(quote_tokens) if stem(t) == stem(word)]
        if mine is None or any(_head(quote_tokens, j, lexicon) for j in mentions):
            continue
        theirs = [
            bound
            for j in mentions
            if (bound := _bound(quote_tokens, j, _PAGE_STOPS, lexicon)) is not None
            and bound[0] == mine[0]
        ]
        if theirs and all(b[1] != mine[1] for b in theirs):
            return [
                Reason(
                    "roles_swapped",
                    f'the claim puts "{word}" with "{mine[2]}", the quote with "{theirs[0][2]}"',
                    claim_says=f"{word} … {mine[2]}",
                    page_says=f"{word} … {theirs[0][2]}",
                )
            ]
    return []


_RATIO_OF = re.compile(
    r"\bratio of (?P<a>[^,;:]+?) to (?P<b>[^,;:]+?)\s*(?:is|was|equals|of|at|,)\s+"
    r"(?:about |roughly |around |on average )?(?P<x>\d+(?:[.,]\d+)?)"
)
_TIMES = re.compile(
    r"(?P<a>[^,;:]+?)\s+(?:is|are|was|were)\s+(?:about |roughly |around |on average )?"
    r"(?P<x>\d+(?:[.,]\d+)?)\s+times\s+(?:as \w+ as |the \w+ of |that of )?(?P<b>[^,;:.]+)"
)


def _ratio(text: str) -> tuple[str, str, str] | None:
    """(numerator, denominator, value) of a ratio ``text`` states: "the ratio of A to B is x",
    "A is x times (as long as, the length of) B"."""
    norm = normal(text)
    for pattern in (_RATIO_OF, _TIMES):
        found = pattern.search(norm)
        if found is not None:
            return found.group("a"), found.group("b"), found.group("x")
    return None


def ratio_reasons(claim: str, quote: str, lexicon: Lexicon) -> list[Reason]:
    """A ratio of the quote the claim states the other way up ("children are 0.28 times the
    summary" for "the ratio of the summary to the children is 0.28"): the same value, the
    claim's numerator the quote's denominator and the other way round (``roles_swapped``)."""
    mine, theirs = _ratio(claim), _ratio(quote)
    if mine is None or theirs is None or mine[2] != theirs[2]:
        return []
    if not _crossed(mine[:2], theirs[:2], lexicon):
        return []
    return [
        Reason(
            "roles_swapped",
            f"the claim turns the quote's ratio of {theirs[0].strip()} to "
            f"{theirs[1].strip()} upside down",
            claim_says=f"{mine[0].strip()} … {mine[2]} times … {mine[1].strip()}",
            page_says=f"ratio of {theirs[0].strip()} to {theirs[1].strip()}",
        )
    ]


#: Least letters of a word that anchors a role by itself (shorter ones are mostly function words).
ANCHOR_LETTERS = 4


def shared_words(claim: str, quote: str) -> list[str]:
    """Content words each side says exactly once: anchors of who does what besides names and
    numbers ("collapsed" and "traversal" in "collapsed tree retrieval is better than tree
    traversal"). A word said twice on a side has no one place."""
    return _said_once(_WORD.findall(normal(claim)), _WORD.findall(normal(quote)))


def _said_once(claim_tokens: Sequence[str], quote_tokens: Sequence[str]) -> list[str]:
    claim_words = Counter(claim_tokens)
    quote_words = Counter(quote_tokens)
    return [
        w
        for w, n in claim_words.items()
        if n == 1
        and quote_words.get(w) == 1
        and len(w) >= ANCHOR_LETTERS
        and w not in _EMPTY
        and not any(c.isdigit() for c in w)
    ]


def _around(tokens: Sequence[str], word: str, a: str, b: str) -> bool:
    """``a`` before ``word`` before ``b`` in ``tokens`` (each once)."""
    if word not in tokens or a not in tokens or b not in tokens:
        return False
    return tokens.index(a) < tokens.index(word) < tokens.index(b)


def converse_reasons(claim: str, quote: str, reasons: list[Reason]) -> list[Reason]:
    """``reasons`` without an ``antonym`` the claim states as the converse: "the document is
    revised less often than the online resources" for "the resources can be updated more
    frequently than this document" (two shared words change sides around the opposite)."""
    claim_tokens = _WORD.findall(normal(claim))
    quote_tokens = _WORD.findall(normal(quote))
    anchors = _said_once(claim_tokens, quote_tokens)

    def converse(reason: Reason) -> bool:
        ours, theirs = reason.claim_says, reason.page_says
        return any(
            _around(claim_tokens, ours, a, b) and _around(quote_tokens, theirs, b, a)
            for a in anchors
            for b in anchors
            if a != b
        )

    return [r for r in reasons if not (r.code == "antonym" and converse(r))]
