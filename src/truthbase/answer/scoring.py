"""The sentences of an answer's sources, scored for a question: what the extractive answerer
chooses from (:mod:`.extractive`).

Each usable sentence of the sources (whole, without a page's running lines or a code listing's
stray lines: :mod:`.quotable`; a long table row by its cells' sentences: :mod:`.rows`; a
question the text asks together with its reply) gets its
features for the question (:class:`Candidate`) and their weighted sum, its ``score``: the index
embedder's cosine, the question's idf share in the sentence and in its whole source, 1 / the
source's rank, and the cosine of a second embedder read for this choice only (the *choice
cosine*, ``extractive.choice_embedder``). :meth:`SentenceScorer.candidates` scores them all,
:meth:`SentenceScorer.contenders` only those that can matter to the choice and to the refusal
model (the same choice, sooner).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..config import ExtractiveSettings
from ..embed import Embedder, embed_queries, embed_question_with
from ..extract.tables import CELL_SEPARATOR
from ..text.results import VALUE
from ..text.sentences import split_sentences
from ..text.vocabulary import idf_table, terms
from .follow_up import Focus, focus_coverage
from .model import Source
from .quotable import (
    folded,
    heads_a_block,
    running_lines,
    whole_spans,
    without_caption_head,
    without_running_lines,
    without_stray_lines,
)
from .refusal_model import Weights, support_score, support_weights, weighted_score
from .rows import (
    PageNames,
    column_names_by_page,
    crosses_into,
    header_rows,
    holds_value,
    names_row,
    row_label,
    row_spans,
    rows_apart,
    table_words,
)

__all__ = [
    "Candidate",
    "SentenceScorer",
    "score_weights",
    "scored_text",
    "terms_as_read",
    "usable",
]


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
    names_columns: bool = False  # a table's column names (:func:`.rows.header_rows`)
    # A table row of values: its table's caption and column names, which the row is read with
    # when the question names it (:func:`.rows.table_words`), and its label, the words that
    # name it (:func:`.rows.row_label`); "" for any other sentence.
    table: str = ""
    row_label: str = ""

    @property
    def scored(self) -> str:
        """The sentence after its row's label, if any: what the question is compared with
        (a row of values the question names: after its table too, ``SentenceScorer._as_read``)."""
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
    choice_cosine: float = 0.0  # the choice embedder's cosine (0.0 without one)
    # A table's column names (:func:`.rows.header_rows`): weighed for whether to answer, not
    # cited where another sentence comes within keep_ratio of them (ExtractiveAnswerer._pick).
    names_columns: bool = False
    # The sentence's vector by the index's embedder, as its cosine was made from it (None when
    # built elsewhere): a question's parts are scored with it, not with the sentence embedded
    # again (ExtractiveAnswerer._per_part). Not part of a candidate's identity.
    vector: npt.NDArray[np.float32] | None = field(default=None, compare=False, repr=False)
    # A table row of values the question names, as it was read: followed by its table's
    # caption and column names (SentenceScorer._as_read); "" when read as :attr:`scored`.
    read: str = field(default="", compare=False, repr=False)

    @property
    def scored(self) -> str:
        """The sentence after its row's label, if any (its text for the named-term rules)."""
        return scored_text(self.label, self.text)

    @property
    def as_read(self) -> str:
        """What the question was compared with: :attr:`read`, else :attr:`scored`."""
        return self.read or self.scored


def score_weights(cfg: ExtractiveSettings) -> Weights:
    """The weights of a sentence's score, which orders the sentences an answer may cite."""
    return (cfg.w_cosine, cfg.w_lexical, cfg.w_context, cfg.w_rank)


#: How many sentences :meth:`SentenceScorer.contenders` scores at a time after the first.
_CONTENDER_BATCH = 8

_LEADER = re.compile(r"(?:\.\s?){5,}|(?:_\s?){5,}")


def _results_row(words: Sequence[str], letters: int, digits: int, chars: int) -> bool:
    """A line of a table the extractor did not find, read as one row: a label opening it
    ("BM25 with RAPTOR"), then two values or more (27.93% 21.17% ...), and nearly nothing but
    letters and digits. Such a line has fewer letters than digits, and it is the very line
    a question about one of its values cites (docs/evals/blind-sets.md)."""
    return (
        sum(ch.isalpha() for ch in words[0]) >= 2
        and sum(VALUE.fullmatch(w) is not None for w in words) >= 2
        and letters + digits >= 0.7 * chars
    )


def _results_line(text: str) -> bool:
    """Whether ``text`` is usable only as a results row (:func:`_results_row`): a line of
    values, not a sentence."""
    letters = sum(ch.isalpha() for ch in text)
    chars = len(text.replace(" ", ""))
    words = text.split()
    return (
        letters < 0.5 * chars
        and bool(words)
        and _results_row(words, letters, sum(ch.isdigit() for ch in text), chars)
    )


def _table_of(
    source: Source, start: int, text: str, page_names: PageNames, label: str, row: bool
) -> tuple[str, str]:
    """A table ``row`` of values' table words and label (:mod:`.rows`); ("", "") for any
    other sentence."""
    if not row:
        return "", ""
    return table_words(source, start, text, page_names), row_label(text, label)


def terms_as_read(scored: str, read: str, written: list[str]) -> list[str]:
    """The terms of a sentence as the question was compared with it (``read``): its
    ``written`` terms (those of its ``scored`` text) unless it was read otherwise (a named
    table row with its table's words); ``read`` "" means as scored (:attr:`Candidate.read`).
    The scorer and the answerer's parts (:mod:`.extractive`) count coverage alike by it."""
    return written if not read or read == scored else terms(read)


def _read_terms(
    raw: Sequence[_Sentence], read: Sequence[str], written: Sequence[list[str]]
) -> list[list[str]]:
    """The terms of each sentence as read (``read``): :func:`terms_as_read`."""
    return [
        terms_as_read(item.scored, text, held)
        for item, text, held in zip(raw, read, written, strict=True)
    ]


def _passage(source: Source) -> str:
    """The words of a source's passage: its text, and its context when it has one."""
    return f"{source.context}\n{source.text}" if source.context else source.text


def usable(text: str, min_chars: int, max_chars: int, *, row: bool = False) -> bool:
    """Whether a sentence can be an answer: long enough, mostly words or a results row
    (:func:`_results_row`), no dot leaders (a TOC).

    A table ``row``'s numbers and dates are its data, not debris (a row of three dates, a name
    and a count has fewer letters than digits): there letters and digits count alike, and the
    cell separators not at all."""
    if not min_chars <= len(text) <= max_chars or _LEADER.search(text):
        return False
    if row:
        body = text.replace(CELL_SEPARATOR, "").replace(" ", "")
        return sum(ch.isalnum() for ch in body) >= 0.5 * len(body)
    if sum(ch.isalpha() for ch in text) >= 0.5 * len(text.replace(" ", "")):
        return True
    return _results_line(text)


#: A question's mark, then what may close it: space, quotes, brackets ("« Pourquoi ? »",
#: "„Warum?“", "（なぜか？）").
_ASKS = re.compile("[?\uff1f][\\s\"'“”‘’»›)\\]\uff09\u300b\u3011\u300d\u300f]*$")


def _reply(
    text: str,
    spans: Sequence[tuple[int, int]],
    at: int,
    rows: set[tuple[int, int]],
    settings: ExtractiveSettings,
) -> int | None:
    """The end of the reply to the question that ``spans[at]`` asks, when it asks one and the
    next span follows it at once: a question in a text asks, its reply answers ("Mr. Bingley
    does not know Mr. Wickham himself?" "No; he never saw him till the other morning."), so
    the question is quoted with its reply, never alone. None for a statement, a table row, a
    question with nothing after it, and a next span that is no reply: a question again, a
    table row, a caption or a numbered heading ("Figure 3. ...", "Section 4.2."), or a piece
    no answer may quote by itself ("CHAPTER XX.", a page's footer)."""
    s, e = spans[at]
    if (s, e) in rows or not _asks(text[s:e]) or at + 1 >= len(spans):
        return None
    n0, n1 = spans[at + 1]
    reply = text[n0:n1]
    if (
        (n0, n1) in rows
        or text[e:n0].strip()
        or _asks(reply)
        or heads_a_block(reply)
        or not usable(reply, settings.min_chars, settings.max_chars)
    ):
        return None
    return n1


def _asks(sentence: str) -> bool:
    """Whether a sentence is a question: a question mark, then nothing but closers."""
    return _ASKS.search(sentence) is not None


def _running_lines(raw: Sequence[_Sentence]) -> set[tuple[str, str]]:
    """(document, text) of the sentences that stand verbatim on two or more pages of one
    document among the sources: a running header or footer (a Chinese quarterly report's
    company name and "2018 年第一季度报告全文" atop every page), which matches any question about
    the document and answers none. A sentence the sources show on one page only is kept,
    however often the document repeats it elsewhere: only what is seen can be judged."""
    units: dict[tuple[str, str], set[int]] = {}
    for source, _, _, text, *_ in raw:
        units.setdefault((source.doc_id, folded(text)), set()).add(source.unit)
    return {key for key, seen in units.items() if len(seen) >= 2}


def _cosines(vectors: npt.NDArray[np.float32], question: npt.NDArray[np.float32]) -> Any:
    """Each row's dot product with the question, clipped to [0, 1]: a row-wise sum, whose float
    result does not depend on which other rows are in ``vectors`` (a BLAS matrix-vector product's
    may: its kernels treat a remainder of rows differently), so that :meth:`contenders` and
    :meth:`candidates` score a sentence alike."""
    return np.clip((vectors * question).sum(axis=1), 0.0, 1.0)


def _bounds(
    raw: Sequence[_Sentence],
    features: Sequence[tuple[float, float]],
    weights: Weights,
    plus: float = 0.0,
) -> list[float]:
    """Each sentence's highest possible score under ``weights``: its cosine at 1.0, and
    ``plus`` (the choice cosine's weight, that cosine at 1.0)."""
    return [
        weighted_score(weights, 1.0, lexical, ctx, item.source.n) + plus
        for item, (lexical, ctx) in zip(raw, features, strict=True)
    ]


class SentenceScorer:
    """Scores the sentences of an answer's sources for a question with ``settings`` (the
    ``extractive`` section): ``embedder`` is the index's, ``chooser`` the choice embedder
    (None: no choice cosine)."""

    def __init__(
        self, embedder: Embedder, settings: ExtractiveSettings, chooser: Embedder | None
    ) -> None:
        self._embedder = embedder
        self.settings = settings
        self._chooser = chooser

    def _choice_cosines(self, asked: str) -> Callable[[Sequence[str]], Any]:
        """A function that gives the choice cosines of texts against ``asked`` (its vector made
        once, on the first call of this method); zeros without a choice embedder."""
        chooser = self._chooser
        if chooser is None:
            return lambda more: np.zeros(len(more), dtype=np.float32)
        question = embed_queries(chooser, [asked])[0]
        return lambda more: (
            _cosines(chooser.embed(list(more)), question) if more else np.zeros(0, dtype=np.float32)
        )

    def sentences(self, sources: Sequence[Source]) -> list[_Sentence]:
        """The usable sentences of the sources, once each, without the document's running
        headers and footers (:func:`_running_lines`); a table row is one, or, when longer than
        ``max_chars``, the sentences of its cells are, labelled by its first cell
        (:func:`.rows.rows_apart`)."""
        cfg = self.settings
        seen: set[tuple[str, int, int, int]] = set()
        raw: list[_Sentence] = []
        # A page's running header or footer is cut from the sentence it touches (.quotable).
        page_lines = running_lines((s.doc_id, s.unit, s.text) for s in sources)
        every_row = [row_spans(s.text) for s in sources]  # in text order, as rows_apart walks
        every_names = [header_rows(s.text, o) for s, o in zip(sources, every_row, strict=True)]
        page_names = column_names_by_page(sources, every_names)
        for source, ordered, column_names in zip(sources, every_row, every_names, strict=True):
            headers = page_lines.get(source.doc_id, frozenset())
            rows = [r for r in ordered if r[1] - r[0] <= cfg.max_chars]
            whole = set(rows)
            long_rows = [r for r in ordered if r not in whole]
            spans, labels = rows_apart(
                source.text, split_sentences(source.text, quoting=True), ordered, set(long_rows)
            )
            quotable = whole_spans(source.text, spans, rows)
            for at, span in enumerate(quotable):
                if crosses_into(span, long_rows):
                    continue  # a line joined into a long row's first cell: not a sentence
                s, e = span
                reply = _reply(source.text, quotable, at, whole, cfg)
                if reply is not None and usable(source.text[s:reply], cfg.min_chars, cfg.max_chars):
                    e = reply  # a question in the text is quoted with its reply
                if headers and span not in whole:
                    s, e = without_running_lines(source.text, s, e, headers)
                if span not in whole:
                    s, e = without_stray_lines(source.text, s, e)
                    s, e = without_caption_head(source.text, s, e)
                text = source.text[s:e]
                key = (source.doc_id, source.unit, source.start + s, source.start + e)
                if key in seen or not usable(
                    text, cfg.min_chars, cfg.max_chars, row=(s, e) in whole
                ):
                    continue
                seen.add(key)
                raw.append(
                    _Sentence(
                        source,
                        source.start + s,
                        source.start + e,
                        text,
                        labels.get(span, ""),
                        (s, e) in column_names,
                        *_table_of(
                            source,
                            source.start + s,
                            text,
                            page_names,
                            labels.get(span, ""),
                            cfg.rows_read_with_table
                            and (s, e) not in column_names
                            and holds_value(text)
                            and ((s, e) in whole or span in labels or _results_line(text)),
                        ),
                    )
                )
        running = _running_lines(raw)
        return [item for item in raw if (item.source.doc_id, folded(item.text)) not in running]

    def _as_read(self, question: str, raw: Sequence[_Sentence]) -> list[str]:
        """Each sentence as the question is compared with it: after its row's label, if any;
        a row of values the question names (:func:`.rows.names_row`: "Kentucky", "July 2015")
        followed by its table's caption and column names (:func:`.rows.table_words`; the row
        first, so that the embedder's 256 word pieces keep it whole)."""
        asked = set(terms(question))
        return [
            f"{item.scored}\n{item.table}"
            if item.table and names_row(asked, item.row_label)
            else item.scored
            for item in raw
        ]

    def _read_and_lexical(
        self,
        question: str,
        sources: Sequence[Source],
        raw: Sequence[_Sentence],
        focus: Focus | None,
    ) -> tuple[list[str], list[tuple[float, float]]]:
        """Each sentence as read (:meth:`_as_read`) and its (lexical, context) features."""
        read = self._as_read(question, raw)
        return read, self._lexical(question, sources, raw, read, focus)

    def _lexical(
        self,
        question: str,
        sources: Sequence[Source],
        raw: Sequence[_Sentence],
        read: Sequence[str],
        focus: Focus | None = None,
    ) -> list[tuple[float, float]]:
        """(lexical, context) of each sentence (``read``: as :meth:`_as_read` reads it): the
        features that need no embedding."""
        q_terms = terms(question)
        # How rare a word is stays counted over the sentences as written (every row holding its
        # table's words would make the question's own words common, and every passage's
        # context weaker).
        written = [terms(item.scored) for item in raw]
        idf, unseen = idf_table(written)
        # A passage's words are its text's and its context's: the column names and caption of
        # its table, which say what the numbers of a row are ("ASQA", "citation precision").
        context = {
            s.n: focus_coverage(q_terms, terms(_passage(s)), idf, unseen, focus) for s in sources
        }
        return [
            (focus_coverage(q_terms, held, idf, unseen, focus), context[source.n])
            for (source, *_), held in zip(raw, _read_terms(raw, read, written), strict=True)
        ]

    def _candidate(
        self,
        item: _Sentence,
        lexical: float,
        ctx: float,
        cos: float,
        choice: float,
        vector: npt.NDArray[np.float32] | None = None,
        read: str = "",
    ) -> Candidate:
        cfg = self.settings
        source, start, end, text, label, names_columns, *_ = item
        score = weighted_score(score_weights(cfg), cos, lexical, ctx, source.n) + (
            cfg.w_choice_cosine * choice
        )
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
            choice_cosine=choice,
            names_columns=names_columns,
            vector=vector,
            read=read if read != item.scored else "",
        )

    def candidates(
        self, question: str, sources: Sequence[Source], focus: Focus | None = None
    ) -> list[Candidate]:
        """Every usable sentence of the sources with its features and score, best first (a
        follow-up's ``focus`` adds the words the earlier turns lend it)."""
        raw = self.sentences(sources)
        if not raw:
            return []
        read, features = self._read_and_lexical(question, sources, raw, focus)
        asked = focus.cosine_text if focus is not None else question
        vectors = embed_question_with(self._embedder, asked, read)
        cosines = _cosines(vectors[1:], vectors[0])
        choices = self._choice_cosines(asked)(read)
        out = [
            self._candidate(item, lexical, ctx, float(cos), float(choice), vector, text)
            for item, (lexical, ctx), cos, choice, vector, text in zip(
                raw, features, cosines, choices, vectors[1:], read, strict=True
            )
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
        what the answerer's ``choose`` needs to make the same choice as from all
        :meth:`candidates`.

        Embedding is nearly all of an answer's time, and most sentences cannot matter: a
        sentence's score is at most its other features plus ``w_cosine`` and
        ``w_choice_cosine`` (cosines are clipped to [0, 1]), and none below ``keep_ratio`` of
        the best is chosen. So the ``first`` sentences of highest bound are embedded, then the
        others a few at a time, highest bound first, while it reaches ``keep_ratio`` of the best
        score so far (the best only rises). The refusal model weighs the same features on its
        own scale (:func:`.refusal_model.support_score`), so a sentence whose bound there
        reaches ``keep_ratio`` of the best support is embedded by the index's embedder too (its
        choice cosine, the slower embedder's, stays 0.0: it cannot be chosen). A vector does not
        depend on the texts batched with it (tests/integration/test_extractive_contenders.py),
        so the scores are the same floats.
        """
        cfg = self.settings
        model = cfg.refusal
        raw = self.sentences(sources)
        if not raw:
            return []
        read, features = self._read_and_lexical(question, sources, raw, focus)
        score_w, support_w = score_weights(cfg), support_weights(model)
        choice_w = cfg.w_choice_cosine if self._chooser is not None else 0.0
        bounds = _bounds(raw, features, score_w, choice_w)
        support_bounds = _bounds(raw, features, support_w)
        order = sorted(range(len(raw)), key=lambda i: -bounds[i])
        head, rest = order[:first], order[first:]
        asked = focus.cosine_text if focus is not None else question
        head_vectors = embed_question_with(self._embedder, asked, [read[i] for i in head])
        question_vector = head_vectors[0]
        choice = self._choice_cosines(asked)

        def scored(
            indices: Sequence[int], embedded: Any = None, *, choosable: bool = True
        ) -> list[Candidate]:
            # ``embedded``: the sentences' index vectors where made already (the head's).
            some = [read[i] for i in indices]
            vectors = self._embedder.embed(some) if embedded is None else embedded
            choices = choice(some) if choosable else np.zeros(len(some), dtype=np.float32)
            cosines = _cosines(vectors, question_vector)
            return [
                self._candidate(raw[i], *features[i], float(cos), float(c), vector, read[i])
                for i, cos, c, vector in zip(indices, cosines, choices, vectors, strict=True)
            ]

        out = scored(head, head_vectors[1:])
        best = max(c.score for c in out)
        best_support = max(support_score(c, model) for c in out)
        done: set[int] = set()
        for at in range(0, len(rest), _CONTENDER_BATCH):
            # 1e-9: a margin on the bounds' float sums.
            batch = [
                i
                for i in rest[at : at + _CONTENDER_BATCH]
                if bounds[i] + 1e-9 >= cfg.keep_ratio * best
            ]
            if not batch:
                break  # the bounds only fall from here
            found = scored(batch)
            out.extend(found)
            done.update(batch)
            best = max(best, *(c.score for c in found))
            best_support = max(best_support, *(support_score(c, model) for c in found))
        more = [
            i
            for i in rest
            if i not in done and support_bounds[i] + 1e-9 >= cfg.keep_ratio * best_support
        ]
        if more:
            out.extend(scored(more, choosable=False))
        out.sort(key=lambda c: (-c.score, c.n, c.start))
        return out
