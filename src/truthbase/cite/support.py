"""Does a quote support a claim? Deterministic checks, each failure named by its reason.

A citation's quote being on its page says the passage exists; readers take "verified" to mean
that the passage *supports* the sentence it is attached to. :func:`check_support` is the one
policy for that second question. It is pure (text in, verdict out; an embedder is the only
optional backend) and runs, in order:

1. **Verbatim**: a claim that is the quote, or a verbatim part of it (under the matching rule of
   :mod:`truthbase.text.matching`), is supported, unless a negation is right next to that part in
   its clause of the quote ("produces forty two units" cut out of "never produces forty two
   units", "is it correct" out of "is it correct or not"), or the cut drops what qualifies it
   (:func:`truthbase.cite.scope.qualified_part`): a restricting word before it ("Users start
   ..." out of "Most users start ...", ``hedge_dropped``) or the condition it is stated under
   ("The job starts." out of "If a user has admin rights, the job starts.",
   ``condition_dropped``). A claim with no word at all ("...") is empty.
2. **Numbers** (``number_missing``): every number, date, percentage and quantity of the claim is
   in the quote. "2,048" and "2048" are one number (a comma or period followed by exactly three
   digits and no further digit group is a thousands separator only for a comma: "4,5" and "4.5"
   are both four and a half, "2,048" is two thousand and forty-eight); "42 %", "42%" and "42
   percent" are one percentage, and a percentage of the claim must be a percentage in the
   quote; number words ("one" .. "nineteen", the tens, "hundred", "thousand", "million",
   "billion", compounds such as "forty two" or "two thousand") equal their digits; the ordinals
   "third" .. "twentieth" and "3rd", "4th" equal their numbers ("first" and "second" are left
   out: they are mostly not counts).
3. **Negation** (``negation_missing``, ``negation_dropped``, :mod:`.negation`): a negation of
   the claim (not,
   never, no, none, nor, without, cannot, n't, nothing, nobody; German nicht, kein*, nie,
   niemals, ohne, nichts, weder) needs a negation in the quote that scopes over the same words,
   and a negation of the quote whose first content word is in the claim needs one in the
   claim. A negation's scope is the content terms after it up to the end of its clause
   (:data:`NEGATION_SCOPE_TERMS` at most); two scopes agree when the first term of either is in
   the other. Negations elsewhere in the quote (a clause the claim leaves out) do not count.
4. **Named terms** (``term_missing``, ``term_substituted``): acronyms, capitalized words that
   do not start a sentence (titles such as "Mr" aside), and tokens with digits in the claim
   occur in the quote or in ``context`` (the source chunk around it); one that is only in the
   context while the claim leaves out a named term of the quote of the same shape (digits,
   acronym, name) is a substitution ("QuALITY" for "RAPTOR").
5. **Coverage** (``low_coverage``): the claim's content terms
   (:func:`truthbase.text.vocabulary.terms`), weighted by idf over the sentences of quote and
   context as the citation aligner weighs them,
   are found in quote and context at least :data:`MIN_COVERAGE`; with an embedder instead: the
   score (the mean of that coverage and the cosine of claim and quote) is at least
   :data:`MIN_SCORE` (``low_score``), the coverage at least the floor :data:`COVERAGE_FLOOR`,
   and a cosine below :data:`MIN_COSINE` needs the alignment to vouch for the claim (coverage
   at least :data:`ALIGNED`; ``low_similarity``).

Since issue 24 (docs/evals/claims-realistic.md), the numbers live in :mod:`.numbers` (28% is
0.28; a difference of two decimals of the quote is a light inference); a claim negation vetoes
only words the quote states (:data:`NEGATION_ABOUT`); named terms may be the cited document's
own (``document``: its title and the head of its first page); the coverage is the alignment of
:mod:`.align` (lemmas, WordNet synonyms and derived forms from :mod:`.lexicon`; not the
embedder's token vectors, which lowered the cross-validated accuracy); and the vetoes of
:mod:`.vetoes` apply in every mode: ``antonym``, ``scope_widened``, ``modality``,
``hedge_dropped``, ``roles_swapped``, ``number_scope``, ``cause_added``, and the bindings of
numbers and directions to their terms; since its third round also the relations and slots of
:mod:`.roles` (``cause_swapped``, items traded between lists, a ratio upside down, a term in
another term's slot) and the added specifics of :mod:`.additions` (``example_added``,
``superlative_added``); since its fourth round a quote is read with the sentence it was cut
from and a two-word name half of which only the context has is another term
(``term_outside_quote``, :mod:`.terms`), and the claim may not pair a quote word with an opposite
the page never says (``opposite_added``), compare where the quote does not
(``comparison_added``), drop a model name with digits from its slot, or read "not only" as
"only" (``not_only_dropped``). Every reason may carry the two sides of its conflict
(``claim_says``, ``page_says``), shown in its text.

The score is the coverage, or the mean of coverage and cosine with an embedder (1.0 for a
verbatim claim); with an embedder it has its threshold (:data:`MIN_SCORE`), since issue 24's
second round: MiniLM's cosine alone lost faithful inferences that reword every word.

An optional model judge (:mod:`.judge`, setting ``support.judge``) is asked after these checks
when no veto failed: the vetoes always override it, its ``entailed`` overrides the score
thresholds, its ``not entailed`` is the reason ``judge_not_entailed``, and its failure leaves
this verdict.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..embed import Embedder
from ..text.sentences import split_sentences
from ..text.vocabulary import QUERY_STOP_WORDS, WORD, idf_table, weighted_coverage
from .additions import (
    comparison_reasons,
    example_reasons,
    opposite_reasons,
    superlative_reasons,
)
from .align import align, normal, stems
from .judge import Judge, apply_judgement, ask_judge
from .lexicon import Lexicon, load_lexicon
from .model import Reason, SupportCheck
from .negation import (
    NEGATION_SCOPE_TERMS,
    NEGATION_WORDS,
    Negation,
    double_negations,
    is_cue,
    negated_part,
    negation_reasons,
    negations,
    not_only_reasons,
)
from .numbers import (
    NUMBER_WORDS,
    ORDINAL_WORDS,
    number_reasons,
    number_word_parts,
    numbers,
    time_bound_reasons,
)
from .roles import (
    cause_swap_reasons,
    condition_swap_reasons,
    converse_reasons,
    list_binding_reasons,
    ratio_reasons,
    shared_words,
    slot_swap_reasons,
)
from .scope import qualified_part, scope_reasons
from .terms import (
    capitalizes_nouns,
    named_terms,
    sibling_term_reasons,
    term_present,
    term_reasons,
    term_shape,
)
from .vetoes import (
    antonym_reasons,
    binding_reasons,
    cause_reasons,
    direction_binding_reasons,
    group_binding_reasons,
    number_binding_reasons,
    number_scope_reasons,
    possibility_reasons,
    role_reasons,
)

__all__ = [
    "ALIGNED",
    "COVERAGE_FLOOR",
    "MIN_COSINE",
    "MIN_COVERAGE",
    "MIN_SCORE",
    "NEGATION_SCOPE_TERMS",
    "NEGATION_WORDS",
    "NUMBER_WORDS",
    "ORDINAL_WORDS",
    "Negation",
    "Reason",
    "SupportCheck",
    "check_support",
    "context_around",
    "coverage",
    "document_names",
    "named_terms",
    "negations",
    "numbers",
    "term_present",
    "term_shape",
]

#: Least idf-weighted share of the claim's content words that the alignment (:mod:`.align`:
#: same term, lemma, WordNet synonym or derived form, contextual token vectors) finds in quote
#: and context, when there is no embedder (the coverage is then the score). Fitted with
#: `truthbase eval claims --claims claims-dev.json` before the score below replaced it where an
#: embedder is at hand (docs/evals/claims-realistic.md).
MIN_COVERAGE = 0.25
#: With an embedder, the least coverage whatever the cosine: a claim with almost none of its
#: words in the passage is about something else (the perturbation benchmark's unrelated
#: sentences, docs/evals/claims-baseline.json). Set low, under every cross-validated threshold
#: of the score: it only backs the score up.
COVERAGE_FLOOR = 0.1
#: With an embedder, the least score: the mean of the alignment's coverage and the cosine of
#: claim and quote (MiniLM). One threshold on the two together instead of one on each: an
#: inference that rewords everything has a low cosine and a good alignment, so the cosine alone
#: does not decide. Fitted (balanced accuracy of kept and caught) with `truthbase eval claims
#: --claims claims-dev.json`: 0.39, cross-validated by item 0.27-0.42
#: (docs/evals/claims-realistic.md).
MIN_SCORE = 0.39
#: The cosine under which a claim is about something else unless the alignment vouches for it
#: (:data:`ALIGNED`): the perturbation benchmark's unrelated sentences of the same document
#: reach a score of 0.46 with a cosine of 0.52 and half their words aligned
#: (docs/evals/claims-baseline.json).
MIN_COSINE = 0.55
#: The coverage with which the alignment vouches for a claim of low cosine: half its weighted
#: content words on the page. Chosen among 0.3-0.6 by the cross-validated balanced accuracy on
#: claims-dev.json (flat from 0.4 to 0.5; docs/evals/claims-realistic.md).
ALIGNED = 0.5


# -- coverage -------------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)] or ([text] if text.strip() else [])


def _coverage_terms(text: str) -> list[str]:
    """Content terms without numbers and negation cues (their own checks compare those)."""
    return [
        t
        for t in stems(text)
        if not any(c.isdigit() for c in t)
        and number_word_parts(t) is None
        and t not in ORDINAL_WORDS
        and not is_cue(t)
        and t not in QUERY_STOP_WORDS  # the fragments of "doesn't", "can't"
    ]


def coverage(claim: str, quote: str, context: str = "") -> float:
    """The idf-weighted share of the claim's content terms found in quote and context (1.0 for
    a claim without content terms: then the other checks decide)."""
    wanted = _coverage_terms(claim)
    if not wanted:
        return 1.0
    passages = [stems(s) for s in _sentences(quote) + _sentences(context)]
    idf, unseen = idf_table(passages)
    have: set[str] = set()
    for p in passages:
        have.update(p)
    return weighted_coverage(wanted, have, idf, unseen)


# -- the entry point ------------------------------------------------------------------------


def _vetoes(
    claim: str, quote: str, context: str, document: str, lexicon: Lexicon, *, german: bool
) -> list[Reason]:
    """Every check no score overrides, in the order of the module doc; ``german``: claim and
    quote read as German (:func:`capitalizes_nouns`)."""
    reasons: list[Reason] = []
    reasons += number_reasons(claim, quote, context, document)
    reasons += negation_reasons(claim, quote)
    reasons += not_only_reasons(claim, quote)
    reasons += term_reasons(claim, quote, context, document)
    reasons += sibling_term_reasons(claim, quote, context, document)
    reasons += antonym_reasons(claim, quote, context, lexicon)
    reasons += scope_reasons(claim, quote, context)
    shared = [t for t in named_terms(claim) if term_present(t, normal(quote))]
    shared_numbers = sorted({v for v, _ in numbers(claim)} & {v for v, _ in numbers(quote)})
    reasons += role_reasons(claim, quote, shared + [w for _, w in numbers(claim)], lexicon)
    reasons += number_scope_reasons(claim, quote, shared_numbers)
    reasons += cause_reasons(claim, quote, context)
    if not any(r.code == "roles_swapped" for r in reasons):
        reasons += binding_reasons(claim, quote, shared)
    if not any(r.code == "roles_swapped" for r in reasons):
        reasons += number_binding_reasons(claim, quote, shared)
    if not any(r.code == "roles_swapped" for r in reasons):
        reasons += group_binding_reasons(claim, quote, shared, named_terms(quote))
    if not any(r.code == "antonym" for r in reasons):
        reasons += direction_binding_reasons(claim, quote, lexicon)
    reasons += possibility_reasons(claim, quote)
    reasons += time_bound_reasons(claim, quote)
    reasons += cause_swap_reasons(claim, quote, lexicon)
    reasons += condition_swap_reasons(claim, quote, lexicon)
    if not any(r.code == "roles_swapped" for r in reasons):
        reasons += list_binding_reasons(claim, quote, lexicon)
    if not any(r.code == "roles_swapped" for r in reasons):
        reasons += ratio_reasons(claim, quote, lexicon)
    if not any(r.code == "roles_swapped" for r in reasons):
        # then words each side says once, where no name or number tells the roles apart
        reasons += role_reasons(claim, quote, shared_words(claim, quote), lexicon, strict=True)
    if not any(r.code == "term_substituted" for r in reasons):
        reasons += slot_swap_reasons(
            claim, quote, context, lexicon, document=document, german=german
        )
    reasons += example_reasons(claim, quote, context, lexicon)
    reasons += superlative_reasons(claim, quote, context, lexicon)
    reasons += opposite_reasons(claim, quote, context, lexicon)
    reasons += comparison_reasons(claim, quote, context, lexicon)
    return converse_reasons(claim, quote, double_negations(claim, reasons))


def _ignored_words(claim: str) -> frozenset[str]:
    """Claim words the coverage leaves to the number and negation checks."""
    return frozenset(
        w
        for w in normal(claim).split()
        if number_word_parts(w) is not None or w in ORDINAL_WORDS or is_cue(w)
    )


def check_support(
    claim: str,
    quote: str,
    *,
    context: str = "",
    embedder: Embedder | None = None,
    document: str = "",
    lexicon: Lexicon | None = None,
    judge: Judge | None = None,
) -> SupportCheck:
    """Whether ``quote`` (with ``context``, the source text around it) supports ``claim``.

    ``document``: text that names the cited document and its authors (its title, first page),
    for claims that name it where the quote says "we". Supported exactly when no check names a
    reason; see the module doc for the checks. ``judge``: the optional model judge, asked only
    when no veto failed and the claim is not verbatim (the rule: :mod:`.judge`).
    """
    check = _deterministic(claim, quote, context, embedder, document, lexicon)
    if judge is None or check.vetoed or check.verbatim:
        return check
    return apply_judgement(check, ask_judge(judge, claim, quote, context))


def _verbatim(claim_norm: str, quote_norm: str) -> SupportCheck | None:
    """The verdict on a claim the quote holds word for word: supported, unless a negation of
    the quote stands right next to it; None for any other claim."""
    body = claim_norm.rstrip(" .!?;:")
    if not body or body not in quote_norm:
        return None
    cue = negated_part(body, quote_norm)
    if cue is not None:
        reason = Reason(
            "negation_dropped",
            f'the quote says "{cue}" right next to the claim',
            claim_says="",
            page_says=cue,
        )
        return SupportCheck(supported=False, score=0.0, reasons=(reason,), coverage=1.0)
    qualified = qualified_part(body, quote_norm)
    if qualified is None:
        return SupportCheck(supported=True, score=1.0, verbatim=True, coverage=1.0)
    return SupportCheck(supported=False, score=0.0, reasons=(qualified,), coverage=1.0)


def _deterministic(
    claim: str,
    quote: str,
    context: str,
    embedder: Embedder | None,
    document: str,
    lexicon: Lexicon | None,
) -> SupportCheck:
    claim_norm, quote_norm = normal(claim), normal(quote)
    if not claim_norm or not WORD.search(claim_norm):
        # "..." or "–" alone says nothing a page could support
        return SupportCheck(
            supported=False, score=0.0, reasons=(Reason("empty_claim", "the claim is empty"),)
        )
    if not quote_norm:
        return SupportCheck(
            supported=False, score=0.0, reasons=(Reason("empty_quote", "the quote is empty"),)
        )
    verbatim = _verbatim(claim_norm, quote_norm)
    if verbatim is not None:
        return verbatim
    words = lexicon if lexicon is not None else load_lexicon()
    german = capitalizes_nouns(f"{claim} {quote}")
    reasons = _vetoes(claim, quote, context, document, words, german=german)
    alignment = align(
        claim,
        quote,
        context,
        words,
        document=document,
        ignore=_ignored_words(claim),
        language="de" if german else None,
    )
    covered = alignment.coverage
    cosine: float | None = None
    score = covered
    if embedder is not None:
        vectors = embedder.embed([claim, quote])
        cosine = float(np.clip(vectors[1] @ vectors[0], 0.0, 1.0))
        score = 0.5 * covered + 0.5 * cosine
    least = MIN_COVERAGE if cosine is None else COVERAGE_FLOOR
    if covered < least:
        reasons.append(
            Reason(
                "low_coverage",
                f"{covered:.0%} of the claim's content words are in the quote or its context "
                f"(at least {least:.0%} needed)",
                claim_says=" ".join(alignment.unaligned[:6]),
            )
        )
    if cosine is not None and cosine < MIN_COSINE and covered < ALIGNED:
        reasons.append(
            Reason(
                "low_similarity",
                f"the claim and the quote are only {cosine:.2f} alike (at least "
                f"{MIN_COSINE:.2f} needed where {covered:.0%} of its words are aligned)",
            )
        )
    elif cosine is not None and score < MIN_SCORE:
        reasons.append(
            Reason(
                "low_score",
                f"the claim scores {score:.2f} against the quote (cosine {cosine:.2f}, "
                f"coverage {covered:.2f}; at least {MIN_SCORE:.2f} needed)",
            )
        )
    return SupportCheck(
        supported=not reasons,
        score=score,
        reasons=tuple(reasons),
        coverage=covered,
        cosine=cosine,
    )


#: Characters of a document's first page that name it (title, authors), after its title.
NAMING_CHARS = 300


def document_names(title: str, first_page: str) -> str:
    """The text that names a document, for claims that name it ("the RAPTOR authors", "NIST"):
    its title and the head of its first page (title and authors, before the abstract)."""
    return f"{title}\n{first_page[:NAMING_CHARS]}"


def reasons_text(reasons: Iterable[Reason]) -> str:
    """The reasons on one line, for terminals."""
    return "; ".join(str(r) for r in reasons)


def context_around(text: str, start: int, end: int, *, sentences: int = 1) -> str:
    """The text of ``sentences`` whole sentences before and after ``text[start:end]``, with the
    sentences the span touches: the ``context`` a quote is checked with when no chunk is given."""
    spans = split_sentences(text)
    if not spans:
        return text
    first = next((i for i, (_, e) in enumerate(spans) if e > start), len(spans) - 1)
    last = next((i for i in range(len(spans) - 1, -1, -1) if spans[i][0] < end), first)
    lo, hi = max(0, first - sentences), min(len(spans) - 1, max(first, last) + sentences)
    return text[spans[lo][0] : spans[hi][1]]
