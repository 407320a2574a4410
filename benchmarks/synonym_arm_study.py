"""A full-text list of the question's WordNet synonyms, fused beside the shipped lists: measured,
not shipped (docs/evals/sets.md, "A list of synonyms").

For each question of each set (its own index, default retrieval settings), the shipped arms are
collected once; the extra list is the question's FTS5 expression OR-ed with the one-word WordNet
synonyms (``synonyms``: the lemmas of the first senses; ``related``: derived forms, similar
words and hypernyms too) of its words, ranked by BM25 as the feedback list is. It is fused at
weights 0, .1, .25, .5 and 1 (0: the shipped ranking), and hybrid Recall@1, Recall@8 and MRR
are reported per set and weight.

    .venv/bin/python benchmarks/synonym_arm_study.py synonyms OUT.json \\
        dev=../shared/golden/dev.json:DEV.sqlite \\
        caps=../shared/golden/capabilities-dev.json:CAPS.sqlite \\
        library=../shared/golden/library-dev.json:LIBRARY.sqlite
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from truthbase.cite.lexicon import Lexicon, load_lexicon
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import default_embedder
from truthbase.eval.golden import default_corpus_root, load_golden
from truthbase.eval.metrics import summarize_results
from truthbase.eval.retrieval import (
    ChunkCache,
    collect_arms,
    prepare_corpus,
    score_mode,
    split_questions,
)
from truthbase.retrieve import hybrid
from truthbase.retrieve.feedback import feedback_query, feedback_words
from truthbase.store import SQLiteStore

ARM = "synonyms"
WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)


def synonym_words(question: str, lexicon: Lexicon, *, related: bool) -> list[str]:
    """The one-word synonyms (or related lemmas) of the question's words, not its own words."""
    own = feedback_words(question)
    out: list[str] = []
    for word in dict.fromkeys(own):
        for lemma in sorted(lexicon.lemmas(word)):
            others = lexicon.related(lemma) if related else lexicon.synonyms(lemma)
            for other in sorted(others):
                if other.isalpha() and len(other) >= 3 and other not in own and other not in out:
                    out.append(other)
    return out


@contextmanager
def fused_at(weight: float) -> Iterator[None]:
    """Fusion that weighs the synonym list (:data:`ARM`) at ``weight``, the others as shipped."""
    shipped = hybrid._weighted_lists

    def weighted(arms: Any, settings: Any, mode: Any) -> Any:
        extra = arms.ranked.pop(ARM, None)
        try:
            used, weights = shipped(arms, settings, mode)
        finally:
            if extra is not None:
                arms.ranked[ARM] = extra
        if mode == "hybrid" and extra is not None:
            used[ARM], weights[ARM] = extra, weight
        return used, weights

    hybrid._weighted_lists = weighted
    try:
        yield
    finally:
        hybrid._weighted_lists = shipped


def study(golden_path: Path, index: Path, *, related: bool) -> dict[str, dict[str, float]]:
    settings = RetrievalSettings()
    embedder = default_embedder()
    lexicon = load_lexicon()
    golden = load_golden(golden_path)
    store = SQLiteStore(index)
    try:
        root = default_corpus_root(golden_path)
        prepared = prepare_corpus(golden, root, store, embedder, ChunkingSettings())
        questions, _ = split_questions(golden, prepared)
        collected = collect_arms(questions, store, embedder, settings)
        for item in collected:
            words = synonym_words(item.question.question, lexicon, related=related)
            if not words or item.arms.fts_query is None:
                continue
            expression = feedback_query(item.arms.fts_query, words, item.arms.languages)
            hits = store.fts_search(
                expression, settings.candidates, settings.fts_title_weight, None
            )
            item.arms.ranked[ARM] = [h.chunk_id for h in hits]
            item.arms.scores[ARM] = {h.chunk_id: h.score for h in hits}
            hybrid.add_owners(store, item.arms)
        chunks = ChunkCache(store, prepared.names)
        out = {}
        for weight in WEIGHTS:
            with fused_at(weight):
                scored = score_mode(collected, chunks, settings, "hybrid")
            out[str(weight)] = summarize_results([result for result, _ in scored])
        return out
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("synonyms", "related"))
    parser.add_argument("out", type=Path)
    parser.add_argument("sets", nargs="+", help="NAME=GOLDEN:INDEX")
    args = parser.parse_args()
    report = {}
    for spec in args.sets:
        name, _, paths = spec.partition("=")
        golden, _, index = paths.partition(":")
        report[name] = study(Path(golden), Path(index), related=args.kind == "related")
        for weight, summary in report[name].items():
            shown = {k: round(summary[k], 3) for k in ("recall@1", "recall@8", "mrr")}
            print(name, weight, shown, flush=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()
    main()
