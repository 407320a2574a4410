"""The extractive answerer: verbatim sentences of the sources, or NO_ANSWER.

No language model, so nothing is invented: every answer sentence is a sentence of a source,
followed by that source's [n]. Each sentence of the sources gets a score for the question, a
weighted sum of

- ``cosine``: the sentence embedding against the question embedding (the index's embedder),
- ``lexical``: the share of the question's idf mass (stemmed content terms, idf over the
  sentences of the sources) that the sentence contains,
- ``context``: the same share for the whole source chunk around the sentence,
- ``rank``: 1 / retrieval rank of the source,
- ``choice cosine`` (opt-in, ``extractive.choice_embedder``): the same cosine by a second
  embedder, multilingual-e5-small, which weighs in the choice of sentences only, never in search
  or in the refusal model (docs/evals/selection.md).

The sentences and their features are :mod:`.scoring`'s.

The best 1 to 3 sentences within ``keep_ratio`` of the best score, no two near-duplicates, make
the answer, in source order. A question that asks several things at once (:mod:`.parts`) gets
the best sentence for each of its parts instead. Only whole sentences are quoted, never the
labels drawn inside a figure (:mod:`.quotable`): a span the splitter cut short is joined with
the rest of its sentence or left out, so the answer reads as prose. A question the text asks
is quoted with its reply, never alone, and a table's column names give way to a sentence that
comes within ``keep_ratio`` of them: they weigh in whether to answer, but say what a value is,
not the value.

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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..cite import defuse_markers
from ..config import ExtractiveSettings
from ..embed import Embedder, embed_queries, load_choice_embedder
from ..extract.tables import CELL_SEPARATOR
from ..model import overlaps
from ..text.vocabulary import idf_table, jaccard, terms, weighted_coverage
from ..turns import Resolution
from .base import Draft
from .follow_up import (
    Focus,
    earlier_side,
    follow_up_focus,
    names_other_item,
    new_words_held,
)
from .model import NO_ANSWER, Source
from .names import (
    code_terms,
    holds_codes,
    holds_phrases,
    missing_named_terms,
    one_of_a_family,
    quoted_phrases,
)
from .parts import question_parts
from .policy import Outcome, answer_probability, extractive_outcome, follow_up_refuses
from .quotable import MIN_ITEM_WORDS, ends_sentence
from .refusal_model import RefusalFeatures, refusal_features
from .scoring import Candidate, SentenceScorer, terms_as_read
from .slots import Slot, asked_slot, fills_slot

#: The share of a part's own cosine in the cosine its sentences are chosen by (the rest is
#: the whole question's): :meth:`ExtractiveAnswerer._per_part`.
_PART_COSINE = 0.5


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
    # The kind of value the question asks for (.slots), when the rule applies: an answer cites
    # sentences that hold one; unfilled_slot: that kind, when no sentence close to the best
    # holds one and the answer is refused (policy rule 3).
    slot: Slot | None = None
    unfilled_slot: Slot | None = None
    outcome: Outcome = "answered"  # "weak": refused, with close passages (answer.policy)
    features: RefusalFeatures | None = None  # what the refusal model weighed
    probability: float = 0.0  # the refusal model's answer probability


def _reads_as_prose(text: str) -> bool:
    """Whether a sentence may join the best one in an answer: a table row, a sentence that ends
    as one, or a line of :data:`~truthbase.answer.quotable.MIN_ITEM_WORDS` words or more. A short
    line with no sentence end is a heading ("CSF Implementation Example"): quoted beside the
    answer it reads as a stray label, though it may answer alone (a cell, a value)."""
    return CELL_SEPARATOR in text or ends_sentence(text) or len(text.split()) >= MIN_ITEM_WORDS


def _display(text: str) -> str:
    # The sentence's own reference markers ("as shown in [3]") must not cite source 3.
    return defuse_markers(" ".join(text.split()))


class ExtractiveAnswerer:
    """Composes answers from source sentences; see the module docstring."""

    def __init__(
        self,
        embedder: Embedder,
        settings: ExtractiveSettings | None = None,
        *,
        chooser: Embedder | None = None,
    ) -> None:
        """``settings``: the ``extractive`` section (None: its defaults). ``chooser``: the
        embedder of the choice cosine (None: the one ``settings.choice_embedder`` names, loaded
        on first use and shared by the process)."""
        self._embedder = embedder
        self.settings = settings if settings is not None else ExtractiveSettings()
        self._chooser = chooser

    def _choice_embedder(self) -> Embedder | None:
        """The embedder of the choice cosine; None when the settings have none or weigh it 0."""
        cfg = self.settings
        if cfg.choice_embedder == "none" or cfg.w_choice_cosine == 0:
            return None
        if self._chooser is None:
            self._chooser = load_choice_embedder(cfg.choice_embedder, self._embedder)
        return self._chooser

    @property
    def name(self) -> str:
        return "extractive"

    def _scorer(self) -> SentenceScorer:
        return SentenceScorer(self._embedder, self.settings, self._choice_embedder())

    def candidates(
        self, question: str, sources: Sequence[Source], focus: Focus | None = None
    ) -> list[Candidate]:
        """Every usable sentence of the sources with its features and score, best first (a
        follow-up's ``focus`` adds the words the earlier turns lend it):
        :meth:`.scoring.SentenceScorer.candidates`."""
        return self._scorer().candidates(question, sources, focus)

    def contenders(
        self,
        question: str,
        sources: Sequence[Source],
        first: int = 4,
        focus: Focus | None = None,
    ) -> list[Candidate]:
        """The candidates that can be the best or an answer sentence, exactly scored, best
        first (:meth:`.scoring.SentenceScorer.contenders`): what :meth:`choose` needs to make
        the same choice as from all :meth:`candidates`."""
        return self._scorer().contenders(question, sources, first, focus)

    def choose(
        self,
        candidates: Sequence[Candidate],
        missing_terms: Sequence[str] = (),
        parts: Sequence[str] = (),
        source_scores: Sequence[float] = (),
        slot: Slot | None = None,
    ) -> Selection:
        """Apply the named-term rule, the asked-slot rule and the refusal model (policy rule 3;
        ``source_scores``: the retrieval scores of the sources, in rank order; ``slot``: the kind
        of value the question asks for, :func:`.slots.asked_slot`), and pick the answer
        sentences: the best ones, or with two or more ``parts`` (:func:`.parts.question_parts`)
        the best per part; with a ``slot``, among the sentences within ``keep_ratio`` of the
        best that hold such a value. A question of several parts asks for more than the slot
        ("Which exam form, and when does it take place?"): the rule leaves it alone."""
        cfg = self.settings
        if not cfg.require_asked_slot or len(parts) >= 2:
            slot = None
        features = refusal_features(candidates, source_scores, cfg.keep_ratio, cfg.refusal)
        best_score = features.support
        missing = tuple(missing_terms) if cfg.require_named_terms else ()
        support = 0.0 if missing else best_score
        probability = answer_probability(features, cfg.refusal)
        filling = self._filling(candidates, slot)
        unfilled = slot if filling is not None and not filling else None
        outcome = extractive_outcome(bool(candidates), missing, features, cfg, unfilled)
        if outcome != "answered":
            return Selection(
                candidates=tuple(candidates),
                chosen=(),
                support=support,
                refused=True,
                best_score=best_score,
                missing_terms=missing,
                slot=slot,
                unfilled_slot=unfilled,
                outcome=outcome,
                features=features,
                probability=probability,
            )
        picked = self._pick(filling or candidates, parts)
        return Selection(
            candidates=tuple(candidates),
            chosen=tuple(picked),
            support=best_score,
            refused=False,
            best_score=best_score,
            slot=slot,
            features=features,
            probability=probability,
        )

    def _filling(
        self, candidates: Sequence[Candidate], slot: Slot | None
    ) -> list[Candidate] | None:
        """The candidates within ``keep_ratio`` of the best that hold a value of the kind
        ``slot`` (best first; None without a slot). Only those: a sentence further down is no
        contender (:meth:`contenders` scores none of them), and an answer that holds the value
        only far below the best is, on the sets measured, a passage on the topic."""
        if slot is None or not candidates:
            return None
        floor = self.settings.keep_ratio * candidates[0].score
        return [c for c in candidates if c.score >= floor and fills_slot(slot, c.text)]

    def _pick(self, candidates: Sequence[Candidate], parts: Sequence[str]) -> list[Candidate]:
        """The answer sentences of an answered question, in source order: not a table's
        column names where another sentence comes within ``keep_ratio`` of them (one that could
        stand beside them in the answer: so :meth:`contenders`, which scores only those, makes
        the same choice as all candidates do)."""
        cfg = self.settings
        citable = [c for c in candidates if not c.names_columns]
        if citable and citable[0].score >= cfg.keep_ratio * candidates[0].score:
            candidates = citable
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
        """``selection`` citing only candidates ``keep`` holds, when any does (and of those, the
        ones that hold the value the question asks for, when any does); whether to answer
        stays as decided, only which sentences are cited moves."""
        if selection.refused:
            return selection
        among = [c for c in selection.candidates if keep(c)]
        slot = selection.slot
        if slot is not None:
            among = [c for c in among if fills_slot(slot, c.text)] or among
        return replace(selection, chosen=tuple(self._pick(among, parts))) if among else selection

    def _per_part(self, candidates: Sequence[Candidate], parts: Sequence[str]) -> list[Candidate]:
        """The best candidate for each part, in source order, each once: scored as for the
        whole question, with the part's share of idf mass in place of the question's and the
        mean of the sentence's cosines to the question and to the part in place of the first
        (a part leans on the whole question: "and what is its main drawback?"; the part's
        cosine alone, or the question's alone, each lost a dev.json question:
        docs/evals/selection.md)."""
        cfg = self.settings
        # Rare words counted over the sentences as written, covered as each was read (a named
        # table row with its table's words), as SentenceScorer scored them.
        written = [terms(c.scored) for c in candidates]
        idf, unseen = idf_table(written)
        sentence_terms = [
            terms_as_read(c.scored, c.read, w) for c, w in zip(candidates, written, strict=True)
        ]
        kept = [c.vector for c in candidates if c.vector is not None]
        vectors = (
            np.stack(kept)
            if len(kept) == len(candidates)
            else self._embedder.embed([c.as_read for c in candidates])
        )
        asked = embed_queries(self._embedder, list(parts))
        chosen: list[Candidate] = []
        for part, part_vector in zip(parts, asked, strict=True):
            p_terms = terms(part)
            cosines = np.clip((vectors * part_vector).sum(axis=1), 0.0, 1.0)  # as scoring's
            scores = [
                c.score
                + cfg.w_lexical * (weighted_coverage(p_terms, st, idf, unseen) - c.lexical)
                + cfg.w_cosine * _PART_COSINE * (float(cos) - c.cosine)
                for c, st, cos in zip(candidates, sentence_terms, cosines, strict=True)
            ]
            pick = candidates[max(range(len(candidates)), key=scores.__getitem__)]
            if all(pick is not c for c in chosen):
                chosen.append(pick)
        chosen.sort(key=lambda c: (c.n, c.start))
        return chosen

    def select(self, question: str, sources: Sequence[Source]) -> Selection:
        return self._decide(
            question, self.candidates(question, sources), sources, question_parts(question)
        )

    def _decide(
        self,
        question: str,
        candidates: Sequence[Candidate],
        sources: Sequence[Source],
        parts: Sequence[str],
    ) -> Selection:
        """:meth:`choose` with what ``question`` names and asks for, over ``sources``."""
        return self.choose(
            candidates,
            missing_named_terms(question, sources),
            parts,
            [s.score for s in sources],
            asked_slot(question),
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
        phrases = quoted_phrases(question)
        if len(parts) >= 2 or others or compared or codes or phrases:
            scored = self.candidates(question, sources, focus)
        else:
            scored = self.contenders(question, sources, focus=focus)
        selection = self._decide(question, scored, sources, parts)
        if others:
            selection = self._cite_among(
                selection, lambda c: not names_other_item(c.text, follow_up), parts
            )
        family = one_of_a_family(codes, selection.candidates)
        if family:
            # A question that names one code of a family the sources list ("What does ID.RA-08
            # require?" beside ID.RA-07 and ID.RA-10) cites the sentences that hold it.
            selection = self._cite_among(selection, lambda c: holds_codes(c.scored, family), parts)
        if phrases:
            # A name the question quotes ("the 'No Critic' ablation") is cited where a sentence
            # holds it, not where one holds its words apart ("No Retriever or Critic").
            selection = self._cite_among(
                selection, lambda c: holds_phrases(c.scored, phrases), parts
            )
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
            "unfilled_slot": selection.unfilled_slot,
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
