"""The extractive answerer: verbatim sentences of the sources, or NO_ANSWER.

No language model, so nothing is invented: every answer sentence is a sentence of a source,
followed by that source's [n]. Each sentence of the sources gets a score for the question, a
weighted sum of

- ``cosine``: the sentence embedding against the question embedding (the index's embedder),
- ``lexical``: the share of the question's idf mass (stemmed content terms, idf over the
  sentences of the sources) that the sentence contains,
- ``context``: the same share for the whole source chunk around the sentence,
- ``rank``: 1 / retrieval rank of the source.

The best 1 to 3 sentences within ``keep_ratio`` of the best score, no two near-duplicates, make
the answer, in source order. A question that asks several things at once (:mod:`.parts`) gets
the best sentence for each of its parts instead. Only whole sentences are quoted, never the
labels drawn inside a figure (:mod:`.quotable`): a span the splitter cut short is joined with
the rest of its sentence or left out, so the answer reads as prose.

Answerability: the question's *named terms* (acronyms such as CISA or MMLU, tokens with digits
such as 42001, capitalized words that do not start a sentence) must all occur in the sources
(their text or their document titles); a question that names something none of the sources
mentions cannot be answered from them, however close the best sentence looks (its support is
0.0). Otherwise the refusal model decides (:mod:`.refusal_model`, rule 3 of
:func:`truthbase.answer.policy.extractive_outcome`): one logistic over the best support and a
few features of the sentences and the sources, fitted across the dev sets
(docs/evals/refusal-model.md). The model weighs the four features with its own support
weights, the scale it was fitted on: the score's weights only choose which sentences an answer
cites, chosen by leaving one dev set out (docs/evals/selection.md; a token-level MaxSim
feature, a sentence's share of new words and a number where the question asks for one did not
help). They and the other limits are the ``extractive`` settings section
(:class:`truthbase.config.ExtractiveSettings`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..cite import defuse_markers
from ..config import ExtractiveSettings
from ..embed import Embedder, embed_question_with
from ..extract.tables import CELL_SEPARATOR
from ..model import overlaps
from ..text.sentences import split_sentences
from ..text.vocabulary import idf_table, jaccard, terms, weighted_coverage
from ..turns import Resolution
from .base import Draft
from .follow_up import (
    Focus,
    earlier_side,
    focus_coverage,
    follow_up_focus,
    names_other_item,
    new_words_held,
)
from .model import NO_ANSWER, Source
from .names import code_terms, holds_codes, missing_named_terms, one_of_a_family
from .parts import question_parts
from .policy import Outcome, answer_probability, extractive_outcome, follow_up_refuses
from .quotable import (
    MIN_ITEM_WORDS,
    ends_sentence,
    folded,
    running_lines,
    whole_spans,
    without_running_lines,
    without_stray_lines,
)
from .refusal_model import (
    RefusalFeatures,
    Weights,
    refusal_features,
    support_score,
    support_weights,
    weighted_score,
)
from .rows import crosses_into, row_spans, rows_apart


def scored_text(label: str, text: str) -> str:
    """A sentence as the question is compared with it: after its table row's label, if any."""
    return f"{label}: {text}" if label else text


class _Sentence(NamedTuple):
    """A usable sentence of a source: its span in the unit, its text, and the label of its
    table row when it is a cell sentence of a long row (:func:`.rows.rows_apart`), else ""."""

    source: Source
    start: int
    end: int
    text: str
    label: str

    @property
    def scored(self) -> str:
        """What the question is compared with: the sentence after its row's label, if any."""
        return scored_text(self.label, self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One source sentence, its features for the question and their weighted sum (``score``,
    which orders the sentences an answer may cite); start and end are unit offsets. ``label``:
    the first cell of its table row when it is a cell sentence of a long row (the features
    read it before the sentence: :attr:`scored`), else ""."""

    n: int
    doc_id: str
    unit: int
    start: int
    end: int
    text: str
    score: float
    cosine: float
    lexical: float
    context: float
    rank: int
    label: str = ""

    @property
    def scored(self) -> str:
        """What the question is compared with: the sentence after its row's label, if any."""
        return scored_text(self.label, self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    candidates: tuple[Candidate, ...]  # best first
    chosen: tuple[Candidate, ...]  # in answer order; empty when refused
    # The best support on the refusal model's scale (refusal_model.support_score; 0.0 without
    # candidates or with missing terms); a candidate's own score only orders the candidates.
    support: float
    refused: bool
    best_score: float = 0.0  # that support before the named-term rule
    missing_terms: tuple[str, ...] = ()  # named terms of the question that no source contains
    outcome: Outcome = "answered"  # "weak": refused, with close passages (answer.policy)
    features: RefusalFeatures | None = None  # what the refusal model weighed
    probability: float = 0.0  # the refusal model's answer probability


def _reads_as_prose(text: str) -> bool:
    """Whether a sentence may join the best one in an answer: a table row, a sentence that ends
    as one, or a line of :data:`~truthbase.answer.quotable.MIN_ITEM_WORDS` words or more. A short
    line with no sentence end is a heading ("CSF Implementation Example"): quoted beside the
    answer it reads as a stray label, though it may answer alone (a cell, a value)."""
    return CELL_SEPARATOR in text or ends_sentence(text) or len(text.split()) >= MIN_ITEM_WORDS


def _score_weights(cfg: ExtractiveSettings) -> Weights:
    """The weights of a sentence's score, which orders the sentences an answer may cite."""
    return (cfg.w_cosine, cfg.w_lexical, cfg.w_context, cfg.w_rank)


_LEADER = re.compile(r"(?:\.\s?){5,}|(?:_\s?){5,}")


def usable(text: str, min_chars: int, max_chars: int, *, row: bool = False) -> bool:
    """Whether a sentence can be an answer: long enough, mostly words, no dot leaders (a TOC).

    A table ``row``'s numbers and dates are its data, not debris (a row of three dates, a name
    and a count has fewer letters than digits): there letters and digits count alike, and the
    cell separators not at all."""
    if not min_chars <= len(text) <= max_chars or _LEADER.search(text):
        return False
    if row:
        body = text.replace(CELL_SEPARATOR, "").replace(" ", "")
        return sum(ch.isalnum() for ch in body) >= 0.5 * len(body)
    letters = sum(ch.isalpha() for ch in text)
    return letters >= 0.5 * len(text.replace(" ", ""))


def _running_lines(raw: Sequence[_Sentence]) -> set[tuple[str, str]]:
    """(document, text) of the sentences that stand verbatim on two or more pages of one
    document among the sources: a running header or footer (a Chinese quarterly report's
    company name and "2018 年第一季度报告全文" atop every page), which matches any question about
    the document and answers none. A sentence the sources show on one page only is kept,
    however often the document repeats it elsewhere: only what is seen can be judged."""
    units: dict[tuple[str, str], set[int]] = {}
    for source, _, _, text, _ in raw:
        units.setdefault((source.doc_id, folded(text)), set()).add(source.unit)
    return {key for key, seen in units.items() if len(seen) >= 2}


def _cosines(vectors: npt.NDArray[np.float32], question: npt.NDArray[np.float32]) -> Any:
    """Each row's dot product with the question, clipped to [0, 1]: a row-wise sum, whose float
    result does not depend on which other rows are in ``vectors`` (a BLAS matrix-vector product's
    may: its kernels treat a remainder of rows differently), so that :meth:`contenders` and
    :meth:`candidates` score a sentence alike."""
    return np.clip((vectors * question).sum(axis=1), 0.0, 1.0)


def _display(text: str) -> str:
    # The sentence's own reference markers ("as shown in [3]") must not cite source 3.
    return defuse_markers(" ".join(text.split()))


class ExtractiveAnswerer:
    """Composes answers from source sentences; see the module docstring."""

    def __init__(self, embedder: Embedder, settings: ExtractiveSettings | None = None) -> None:
        """``settings``: the ``extractive`` section (None: its defaults)."""
        self._embedder = embedder
        self.settings = settings if settings is not None else ExtractiveSettings()

    @property
    def name(self) -> str:
        return "extractive"

    def _sentences(self, sources: Sequence[Source]) -> list[_Sentence]:
        """The usable sentences of the sources, once each, without the document's running
        headers and footers (:func:`_running_lines`); a table row is one, or, when longer than
        ``max_chars``, the sentences of its cells are, labelled by its first cell
        (:func:`.rows.rows_apart`)."""
        cfg = self.settings
        seen: set[tuple[str, int, int, int]] = set()
        raw: list[_Sentence] = []
        # A page's running header or footer is cut from the sentence it touches (.quotable).
        page_lines = running_lines((s.doc_id, s.unit, s.text) for s in sources)
        for source in sources:
            headers = page_lines.get(source.doc_id, frozenset())
            ordered = row_spans(source.text)  # in text order, as rows_apart walks them
            rows = [r for r in ordered if r[1] - r[0] <= cfg.max_chars]
            whole = set(rows)
            long_rows = [r for r in ordered if r not in whole]
            spans, labels = rows_apart(
                source.text, split_sentences(source.text, quoting=True), ordered, set(long_rows)
            )
            for span in whole_spans(source.text, spans, rows):
                if crosses_into(span, long_rows):
                    continue  # a line joined into a long row's first cell: not a sentence
                s, e = span
                if headers and span not in whole:
                    s, e = without_running_lines(source.text, s, e, headers)
                if span not in whole:
                    s, e = without_stray_lines(source.text, s, e)
                text = source.text[s:e]
                key = (source.doc_id, source.unit, source.start + s, source.start + e)
                if key in seen or not usable(
                    text, cfg.min_chars, cfg.max_chars, row=(s, e) in whole
                ):
                    continue
                seen.add(key)
                raw.append(
                    _Sentence(
                        source, source.start + s, source.start + e, text, labels.get(span, "")
                    )
                )
        running = _running_lines(raw)
        return [item for item in raw if (item.source.doc_id, folded(item.text)) not in running]

    def _lexical(
        self,
        question: str,
        sources: Sequence[Source],
        raw: Sequence[_Sentence],
        focus: Focus | None = None,
    ) -> list[tuple[float, float]]:
        """(lexical, context) of each sentence: the features that need no embedding."""
        q_terms = terms(question)
        # A long table row's cell sentence is scored with its row's label ("Tier 3: Repeatable").
        sentence_terms = [terms(item.scored) for item in raw]
        idf, unseen = idf_table(sentence_terms)
        context = {s.n: focus_coverage(q_terms, terms(s.text), idf, unseen, focus) for s in sources}
        return [
            (focus_coverage(q_terms, st, idf, unseen, focus), context[source.n])
            for (source, *_), st in zip(raw, sentence_terms, strict=True)
        ]

    def _candidate(self, item: _Sentence, lexical: float, ctx: float, cos: float) -> Candidate:
        cfg = self.settings
        source, start, end, text, label = item
        score = weighted_score(_score_weights(cfg), cos, lexical, ctx, source.n)
        return Candidate(
            n=source.n,
            doc_id=source.doc_id,
            unit=source.unit,
            start=start,
            end=end,
            text=text,
            score=score,
            cosine=cos,
            lexical=lexical,
            context=ctx,
            rank=source.n,
            label=label,
        )

    def candidates(
        self, question: str, sources: Sequence[Source], focus: Focus | None = None
    ) -> list[Candidate]:
        """Every usable sentence of the sources with its features and score, best first (a
        follow-up's ``focus`` adds the words the earlier turns lend it)."""
        raw = self._sentences(sources)
        if not raw:
            return []
        features = self._lexical(question, sources, raw, focus)
        asked = focus.cosine_text if focus is not None else question
        vectors = embed_question_with(self._embedder, asked, [item.scored for item in raw])
        cosines = _cosines(vectors[1:], vectors[0])
        out = [
            self._candidate(item, lexical, ctx, float(cos))
            for item, (lexical, ctx), cos in zip(raw, features, cosines, strict=True)
        ]
        out.sort(key=lambda c: (-c.score, c.n, c.start))
        return out

    def contenders(
        self,
        question: str,
        sources: Sequence[Source],
        first: int = 4,
        focus: Focus | None = None,
    ) -> list[Candidate]:
        """The candidates that can be the best or an answer sentence, exactly scored, best first:
        what :meth:`choose` needs to make the same choice as from all :meth:`candidates`.

        Embedding the sentences is nearly all of an answer's time, and most sentences cannot
        matter: a sentence's score is at most its features without the embedding plus
        ``w_cosine`` (the cosine is clipped to [0, 1]), and :meth:`choose` takes no sentence
        below ``keep_ratio`` of the best. So the ``first`` sentences with the highest other
        features are embedded (with the question), then every other sentence whose bound still
        reaches ``keep_ratio`` of the best score so far, in one more call; the rest can be
        neither the best nor chosen (the best only rises). The refusal model weighs the same
        features on its own scale (:func:`.refusal_model.support_score`), so a sentence is also
        embedded when its bound there reaches ``keep_ratio`` of the best support so far: the
        features are those of all candidates. A sentence's vector does not depend on the texts
        batched with it (the answer gate and tests/integration/test_extractive_contenders.py
        hold this), so the scores are the same floats.
        """
        cfg = self.settings
        model = cfg.refusal
        raw = self._sentences(sources)
        if not raw:
            return []
        features = self._lexical(question, sources, raw, focus)
        score_w, support_w = _score_weights(cfg), support_weights(model)
        bounds = [
            weighted_score(score_w, 1.0, lexical, ctx, item.source.n)
            for item, (lexical, ctx) in zip(raw, features, strict=True)
        ]
        support_bounds = [
            weighted_score(support_w, 1.0, lexical, ctx, item.source.n)
            for item, (lexical, ctx) in zip(raw, features, strict=True)
        ]
        order = sorted(range(len(raw)), key=lambda i: -bounds[i])
        head, rest = order[:first], order[first:]
        asked = focus.cosine_text if focus is not None else question
        vectors = embed_question_with(self._embedder, asked, [raw[i].scored for i in head])
        question_vector = vectors[0]
        out = [
            self._candidate(raw[i], *features[i], float(cos))
            for i, cos in zip(head, _cosines(vectors[1:], question_vector), strict=True)
        ]
        best = max(c.score for c in out)
        best_support = max(support_score(c, model) for c in out)
        # The bounds are the scores' own sum with the cosine at its maximum; 1e-9 is a margin.
        more = [
            i
            for i in rest
            if bounds[i] + 1e-9 >= cfg.keep_ratio * best
            or support_bounds[i] + 1e-9 >= cfg.keep_ratio * best_support
        ]
        if more:
            extra = self._embedder.embed([raw[i].scored for i in more])
            out.extend(
                self._candidate(raw[i], *features[i], float(cos))
                for i, cos in zip(more, _cosines(extra, question_vector), strict=True)
            )
        out.sort(key=lambda c: (-c.score, c.n, c.start))
        return out

    def choose(
        self,
        candidates: Sequence[Candidate],
        missing_terms: Sequence[str] = (),
        parts: Sequence[str] = (),
        source_scores: Sequence[float] = (),
    ) -> Selection:
        """Apply the named-term rule and the refusal model (policy rule 3; ``source_scores``:
        the retrieval scores of the sources, in rank order), and pick the answer sentences: the
        best ones, or with two or more ``parts`` (:func:`.parts.question_parts`) the best per
        part."""
        cfg = self.settings
        features = refusal_features(candidates, source_scores, cfg.keep_ratio, cfg.refusal)
        best_score = features.support
        missing = tuple(missing_terms) if cfg.require_named_terms else ()
        support = 0.0 if missing else best_score
        probability = answer_probability(features, cfg.refusal)
        outcome = extractive_outcome(bool(candidates), missing, features, cfg)
        if outcome != "answered":
            return Selection(
                candidates=tuple(candidates),
                chosen=(),
                support=support,
                refused=True,
                best_score=best_score,
                missing_terms=missing,
                outcome=outcome,
                features=features,
                probability=probability,
            )
        picked = self._pick(candidates, parts)
        return Selection(
            candidates=tuple(candidates),
            chosen=tuple(picked),
            support=best_score,
            refused=False,
            best_score=best_score,
            features=features,
            probability=probability,
        )

    def _pick(self, candidates: Sequence[Candidate], parts: Sequence[str]) -> list[Candidate]:
        """The answer sentences of an answered question, in source order."""
        cfg = self.settings
        best = candidates[0]
        if len(parts) >= 2:
            return self._per_part(candidates, parts)
        chosen: list[Candidate] = [best]
        chosen_terms = [terms(best.text)]
        for c in candidates[1:]:
            if len(chosen) >= cfg.max_sentences or c.score < cfg.keep_ratio * best.score:
                break
            c_terms = terms(c.text)
            if self._repeats(c, c_terms, chosen, chosen_terms):
                continue
            if not _reads_as_prose(c.text):
                continue
            chosen.append(c)
            chosen_terms.append(c_terms)
        chosen.sort(key=lambda c: (c.n, c.start))
        return chosen

    def _repeats(
        self,
        c: Candidate,
        c_terms: Sequence[str],
        chosen: Sequence[Candidate],
        chosen_terms: Sequence[Sequence[str]],
    ) -> bool:
        """Whether ``c`` (its terms ``c_terms``) says again what a chosen sentence says: it
        shares text with one, or nearly all its words (``duplicate_jaccard``)."""
        return any(overlaps(c, o) for o in chosen) or any(
            jaccard(c_terms, t) >= self.settings.duplicate_jaccard for t in chosen_terms
        )

    def _cite_among(
        self, selection: Selection, keep: Callable[[Candidate], bool], parts: Sequence[str]
    ) -> Selection:
        """``selection`` citing only candidates ``keep`` holds, when any does; whether to answer
        stays as decided, only which sentences are cited moves."""
        if selection.refused:
            return selection
        among = [c for c in selection.candidates if keep(c)]
        return replace(selection, chosen=tuple(self._pick(among, parts))) if among else selection

    def _per_part(self, candidates: Sequence[Candidate], parts: Sequence[str]) -> list[Candidate]:
        """The best candidate for each part, in source order, each once: scored as for the
        whole question, with the part's share of idf mass in place of the question's."""
        cfg = self.settings
        sentence_terms = [terms(c.scored) for c in candidates]
        idf, unseen = idf_table(sentence_terms)
        chosen: list[Candidate] = []
        for part in parts:
            p_terms = terms(part)
            scores = [
                c.score + cfg.w_lexical * (weighted_coverage(p_terms, st, idf, unseen) - c.lexical)
                for c, st in zip(candidates, sentence_terms, strict=True)
            ]
            pick = candidates[max(range(len(candidates)), key=scores.__getitem__)]
            if all(pick is not c for c in chosen):
                chosen.append(pick)
        chosen.sort(key=lambda c: (c.n, c.start))
        return chosen

    def select(self, question: str, sources: Sequence[Source]) -> Selection:
        return self.choose(
            self.candidates(question, sources),
            missing_named_terms(question, sources),
            question_parts(question),
            [s.score for s in sources],
        )

    def compose(self, selection: Selection) -> str:
        if selection.refused:
            return NO_ANSWER
        return " ".join(f"{_display(c.text)} [{c.n}]" for c in selection.chosen)

    def draft(
        self, question: str, sources: Sequence[Source], follow_up: Resolution | None = None
    ) -> Draft:
        """The answer as one token per sentence (each with its marker), and the support; chosen
        from the :meth:`contenders` only (the same choice, sooner).

        A follow-up (``follow_up``, its resolution) is answered by its own words and, weaker,
        the words the earlier turns lend it (:mod:`.follow_up`); one whose cited passages lack
        the words it adds is refused (policy rule 4). Beside a model's rewrite it reads the
        question as the resolution without a model does (:attr:`~truthbase.turns.Resolution.
        words_question`)."""
        cfg = self.settings
        if follow_up is not None and follow_up.kind == "rewritten":
            question = follow_up.words_question  # its words, not a model's paraphrase of them
        focus = follow_up_focus(question, follow_up, cfg.follow_up_context_weight)
        parts = question_parts(question)
        # A part's best sentence need not be a contender for the whole question, nor the best
        # sentence about one item of a list a contender beside the list's sentence: all are
        # scored.
        others = follow_up.referent_others if follow_up is not None else ()
        compared = follow_up.compared if follow_up is not None else ()
        codes = code_terms(question)
        if len(parts) >= 2 or others or compared or codes:
            scored = self.candidates(question, sources, focus)
        else:
            scored = self.contenders(question, sources, focus=focus)
        selection = self.choose(
            scored, missing_named_terms(question, sources), parts, [s.score for s in sources]
        )
        if others:
            selection = self._cite_among(
                selection, lambda c: not names_other_item(c.text, follow_up), parts
            )
        family = one_of_a_family(codes, selection.candidates)
        if family:
            # A question that names one code of a family the sources list ("What does ID.RA-08
            # require?" beside ID.RA-07 and ID.RA-10) cites the sentences that hold it.
            selection = self._cite_among(selection, lambda c: holds_codes(c.scored, family), parts)
        held = new_words_held(follow_up, {c.n for c in selection.chosen}, sources)
        if not selection.refused and follow_up_refuses(held, cfg.follow_up_new_support):
            selection = Selection(
                candidates=selection.candidates,
                chosen=(),
                support=selection.support,
                refused=True,
                best_score=selection.best_score,
                outcome="refused",
                features=selection.features,
                probability=selection.probability,
            )
        earlier = None if selection.refused else earlier_side(selection.candidates, follow_up)
        if earlier is not None and not self._repeats(
            earlier,
            terms(earlier.text),
            selection.chosen,
            [terms(c.text) for c in selection.chosen],
        ):
            # A comparison shows both sides: the new one chosen above (whether to answer is
            # decided on it alone), the earlier one as the previous answer cited it.
            chosen = sorted((*selection.chosen, earlier), key=lambda c: (c.n, c.start))
            selection = replace(selection, chosen=tuple(chosen))
        info: dict[str, Any] = {
            "support": round(selection.support, 4),
            "best_score": round(selection.best_score, 4),
            "missing_terms": list(selection.missing_terms),
            "threshold": cfg.threshold,
            "answer_probability": round(selection.probability, 4),
            "refusal_features": selection.features.as_dict() if selection.features else None,
            "outcome": selection.outcome,
        }
        if held is not None:
            info["new_words_held"] = round(held, 4)
        return Draft(tokens=self._tokens(selection), info=info)

    def _tokens(self, selection: Selection) -> Iterator[str]:
        if selection.refused:
            yield NO_ANSWER
            return
        for i, c in enumerate(selection.chosen):
            yield ("" if i == 0 else " ") + f"{_display(c.text)} [{c.n}]"
