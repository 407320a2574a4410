"""Resolve an answer's markers and tags to spans of the stored page text, and decide each
citation's state: *why is this verified* is answered in this file.

For each claim of a parsed answer and each source it cites, the span is found inside that
source: the claim itself when it is a verbatim passage of the source (extractive answers), else
the source sentence, or two consecutive sentences, that best match the claim (stemmed,
idf-weighted term overlap, plus embedding cosine when an embedder is given). A position tag
that falls inside a source resolves to exactly its span.

Then two checks, for markers and tags alike (a tag is never a free pass):

1. The quote check (``verified``): the quote is in the stored unit text at its span under the
   one matcher (:func:`span_verified`, :mod:`truthbase.text.matching`).
2. The support check: does the claim follow from the quote? :func:`claim_support` is the only
   place this is decided: the deterministic checks of :mod:`truthbase.cite.support` (numbers,
   negation, named terms, coverage, cosine), each failure a named reason, then the optional
   model judge (``support.judge``, :mod:`truthbase.cite.judge`) when no veto failed.

The state (:func:`citation_state`): ``supported`` when both pass, ``quote_only`` when only the
quote check does, ``unverified`` otherwise; ``reasons`` name every failed check. A
``quote_only`` citation also carries its conflict (:mod:`.conflict`): the failing check, the
two sides, the page's side located on the page.
Markers that name no source and tags that resolve to no source are dropped and reported.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import numpy as np

from ..embed import Embedder
from ..geometry import span_line_rects
from ..ingest.screen import injected_spans
from ..model import Unit
from ..records import Citation, CitationState, Source
from ..telemetry import span
from ..text.matching import find_quote, normalize, quote_in
from ..text.sentences import split_sentences
from ..text.vocabulary import idf_table, terms, weighted_coverage
from .conflict import conflict_of
from .judge import Judge
from .model import Reason
from .parse import Claim, ParsedAnswer, Tag, render_groups
from .support import check_support

#: A claim must be at least this long (normalized) to be located verbatim in a source.
MIN_EXACT_CHARS = 20
#: A pair of consecutive sentences replaces the best single one only when it scores this much more.
PAIR_MARGIN = 0.05


class UnitReader(Protocol):
    """What resolution needs from a store: the canonical text and boxes of one unit."""

    def unit(self, doc_id: str, index: int) -> Unit | None: ...


class UnitCache:
    """Units loaded once per answer."""

    def __init__(self, reader: UnitReader) -> None:
        self._reader = reader
        self._units: dict[tuple[str, int], Unit | None] = {}

    def get(self, doc_id: str, index: int) -> Unit | None:
        key = (doc_id, index)
        if key not in self._units:
            self._units[key] = self._reader.unit(doc_id, index)
        return self._units[key]


def span_verified(unit_text: str, start: int, end: int, quote: str) -> bool:
    """Whether ``quote`` is, under the matching rule, in ``unit_text[start:end]``."""
    if not 0 <= start < end <= len(unit_text) or not normalize(quote):
        return False
    return quote_in(quote, unit_text[start:end])


@dataclass(slots=True, kw_only=True)
class Resolution:
    citations: list[Citation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    text: str = ""  # the answer text with dropped markers and tags removed


class Support(NamedTuple):
    """Whether a claim follows from a quote, how strongly (0..1), and why not when it does not."""

    supported: bool
    score: float
    reasons: tuple[str, ...]
    #: The same reasons as records, with the two sides of each conflict (:mod:`.conflict`).
    checks: tuple[Reason, ...] = ()


def _lexical(claim: str, quote: str, context: str) -> float:
    """The share of the claim's idf mass (idf over the sentences of ``context``) in ``quote``."""
    spans = split_sentences(context) if context.strip() else []
    sentence_terms = [terms(context[a:b]) for a, b in spans] or [terms(quote)]
    idf, unseen = idf_table(sentence_terms)
    return weighted_coverage(terms(claim), terms(quote), idf, unseen)


def _score(claim: str, quote: str, context: str, embedder: Embedder | None) -> float:
    if len(normalize(claim)) >= MIN_EXACT_CHARS and find_quote(claim, quote) is not None:
        return 1.0  # the claim is the quote's own words
    lexical = _lexical(claim, quote, context)
    if embedder is None:
        return lexical
    vectors = embedder.embed([claim, quote])
    cosine = float(np.clip(vectors[1] @ vectors[0], 0.0, 1.0))
    return 0.5 * lexical + 0.5 * cosine


def claim_support(
    claim: str,
    quote: str,
    context: str = "",
    embedder: Embedder | None = None,
    judge: Judge | None = None,
) -> Support:
    """Whether ``claim`` follows from ``quote`` (``context``: the source passage around the
    quote). The one support decision of every citation, marker or tag, in every mode: the
    deterministic checks of :func:`truthbase.cite.support.check_support` (numbers, negation,
    named terms, content-word coverage, embedding cosine), each failure a named reason, then
    the optional model ``judge`` (:mod:`.judge`) when no veto failed.
    """
    if not normalize(claim):
        return Support(False, 0.0, ("empty_claim: no claim before the citation",))
    if not normalize(quote):
        return Support(False, 0.0, ("empty_quote: no quote",))
    with span("verify"):
        check = check_support(claim, quote, context=context, embedder=embedder, judge=judge)
    return Support(
        check.supported, check.score, tuple(str(r) for r in check.reasons), check.reasons
    )


def citation_state(
    verified: bool, support: Support, injected: str | None = None
) -> tuple[CitationState, tuple[str, ...]]:
    """The state shown for a citation and its reasons: see the module docstring."""
    if not verified:
        return "unverified", ("the quote is not on the page at its span", *support.reasons)
    if support.supported and injected is not None:
        # The page says it, as an order to the model (the injection screen's rule): a quote
        # of it never supports a claim.
        return "quote_only", (f"injected: the quote is text addressed to a model ({injected})",)
    if support.supported:
        return "supported", ()
    return "quote_only", support.reasons


def _injected(
    text: str,
    start: int,
    end: int,
    claim: str,
    context: str,
    embedder: Embedder | None,
    judge: Judge | None = None,
) -> str | None:
    """The screen rule of an injected stretch of ``text`` that the quote [start, end) overlaps,
    when the claim is not supported by the quote's other words alone, or is supported by the
    injected words at least as well as by the others; else None. An honest claim cited with a
    passage that also holds an injection keeps its support; a claim that the injection backs
    (alone, or as well as the honest text) does not: the support rule scores the words a claim
    shares with a quote, and a claim made from an injection ("station seven was closed for
    the whole quarter") shares most of its words with an honest page about the same station."""
    overlapping = [(lo, hi, r) for lo, hi, r in injected_spans(text) if lo < end and start < hi]
    if not overlapping:
        return None
    kept = text[start:end]
    rest = context
    for lo, hi, _ in overlapping:
        kept = kept.replace(text[max(lo, start) : min(hi, end)], " ")
        rest = rest.replace(text[lo:hi], " ")
    if not normalize(kept):
        return overlapping[0][2]
    honest = claim_support(claim, kept, rest, embedder, judge)
    if not honest.supported:
        return overlapping[0][2]
    injected = " ".join(text[lo:hi] for lo, hi, _ in overlapping)
    backed = claim_support(claim, injected, "", embedder)
    return overlapping[0][2] if backed.supported and backed.score >= honest.score else None


def _unverified(source: Source, start: int, end: int, claim: str, via: str, why: str) -> Citation:
    return Citation(
        n=source.n,
        doc_id=source.doc_id,
        unit=source.unit,
        start=start,
        end=end,
        quote="",
        rects=(),
        verified=False,
        claim=claim,
        support=0.0,
        via="tag" if via == "tag" else "marker",
        state="unverified",
        reasons=(why,),
    )


def make_citation(
    units: UnitCache,
    source: Source,
    start: int,
    end: int,
    *,
    claim: str,
    via: str = "marker",
    embedder: Embedder | None = None,
    judge: Judge | None = None,
) -> Citation:
    """A citation of ``source`` at the unit span [start, end): the quote checked against the
    stored unit, the claim against the quote (:func:`claim_support`), the state decided."""
    unit = units.get(source.doc_id, source.unit)
    if unit is None:
        return _unverified(source, start, end, claim, via, "the cited page is not in the index")
    if not 0 <= start < end <= len(unit.text):
        return _unverified(source, start, end, claim, via, "the span is outside the page text")
    # The quote is what the answer was built from (the source as retrieved); verification
    # confirms that it is on the stored page at the span.
    inside = source.start <= start < end <= source.end
    quote = source.text[start - source.start : end - source.start] if inside else ""
    verified = span_verified(unit.text, start, end, quote)
    support = claim_support(claim, quote, source.text, embedder, judge)
    injected = (
        _injected(unit.text, start, end, claim, source.text, embedder, judge)
        if verified and support.supported
        else None
    )
    state, reasons = citation_state(verified, support, injected)
    conflict = (
        conflict_of(support.checks, unit.text, unit.boxes, start, end)
        if state == "quote_only" and injected is None
        else None
    )
    return Citation(
        n=source.n,
        doc_id=source.doc_id,
        unit=source.unit,
        start=start,
        end=end,
        quote=quote,
        rects=tuple(span_line_rects(unit.text, unit.boxes, start, end)),
        verified=verified,
        claim=claim,
        support=support.score,
        via="tag" if via == "tag" else "marker",
        state=state,
        reasons=reasons,
        conflict=conflict,
    )


def _exact_span(claim: str, source: Source) -> tuple[int, int] | None:
    if len(normalize(claim)) < MIN_EXACT_CHARS:
        return None
    found = find_quote(claim, source.text)
    if found is None:
        return None
    return source.start + found[0][0], source.start + found[-1][1]


def align_claim(
    claim: str, source: Source, embedder: Embedder | None = None
) -> tuple[int, int, float] | None:
    """The unit span inside ``source`` that best supports ``claim``, with its support in [0, 1].

    Verbatim claims resolve to themselves (support 1.0). Otherwise each source sentence, and
    each pair of consecutive sentences, is scored; None when the source has no sentences.
    """
    exact = _exact_span(claim, source)
    if exact is not None:
        return exact[0], exact[1], 1.0
    spans = split_sentences(source.text)
    if not spans:
        return None
    candidates = list(spans)
    candidates += [(a[0], b[1]) for a, b in itertools.pairwise(spans)]
    texts = [source.text[s:e] for s, e in candidates]
    claim_terms = terms(claim)
    sentence_terms = [terms(t) for t in texts]
    idf, unseen = idf_table(sentence_terms[: len(spans)])
    lexical = [weighted_coverage(claim_terms, st, idf, unseen) for st in sentence_terms]
    if embedder is not None:
        vectors = embedder.embed([claim, *texts])
        cosine = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        scores = [0.5 * lx + 0.5 * float(c) for lx, c in zip(lexical, cosine, strict=True)]
    else:
        scores = lexical
    singles = scores[: len(spans)]
    best = max(range(len(spans)), key=lambda i: singles[i])
    best_score = singles[best]
    for j in range(len(spans), len(candidates)):
        if scores[j] > best_score + PAIR_MARGIN:
            best, best_score = j, scores[j]
    start, end = candidates[best]
    return source.start + start, source.start + end, best_score


def _tag_source(tag: Tag, sources: Sequence[Source], preferred: Sequence[int]) -> Source | None:
    inside = [s for s in sources if s.unit == tag.unit and s.start <= tag.start < tag.end <= s.end]
    for s in inside:
        if s.n in preferred:
            return s
    return inside[0] if inside else None


def resolve_citations(
    parsed: ParsedAnswer,
    sources: Sequence[Source],
    reader: UnitReader,
    embedder: Embedder | None = None,
    judge: Judge | None = None,
) -> Resolution:
    """Citations for every claim of ``parsed``; a refusal has none (its markers are dropped)."""
    result = Resolution()
    units = UnitCache(reader)
    by_n = {s.n: s for s in sources}
    kept_numbers: list[tuple[int, ...]] = []
    for claim in parsed.claims:
        kept: list[int] = []
        if parsed.refused:
            kept_numbers.append(())
            continue
        for n in claim.numbers:
            if n not in by_n:
                result.problems.append(
                    f"marker [{n}] names no source (there are {len(sources)}); dropped"
                )
        valid = [n for n in claim.numbers if n in by_n]
        for tag in claim.tags:
            source = _tag_source(tag, sources, valid)
            if source is None:
                result.problems.append(f"tag {tag.text} is inside no source; dropped")
                continue
            result.citations.append(
                make_citation(
                    units,
                    source,
                    tag.start,
                    tag.end,
                    claim=claim.text,
                    via="tag",
                    embedder=embedder,
                    judge=judge,
                )
            )
            kept.append(source.n)
        tagged = set(kept)
        for n in valid:
            kept.append(n)
            if n in tagged:
                continue
            result.citations.append(_claim_citation(units, claim, by_n[n], embedder, judge))
        kept_numbers.append(tuple(dict.fromkeys(kept)))
    result.text = render_groups(parsed.text, parsed.claims, kept_numbers)
    return result


def _claim_citation(
    units: UnitCache,
    claim: Claim,
    source: Source,
    embedder: Embedder | None,
    judge: Judge | None = None,
) -> Citation:
    aligned = align_claim(claim.text, source, embedder) if claim.text.strip() else None
    if aligned is None:
        why = "no claim before the marker" if not claim.text.strip() else "the source has no text"
        return _unverified(source, source.start, source.end, claim.text, "marker", why)
    start, end, _ = aligned
    return make_citation(
        units, source, start, end, claim=claim.text, embedder=embedder, judge=judge
    )
