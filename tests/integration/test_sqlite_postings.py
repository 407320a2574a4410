"""The SQLite full-text arm from postings in memory (store/sqlite/postings.py) against FTS5's
bm25() on real indexes, the threshold forced low: the same chunks in the same order with the
same scores, bit for bit, for every golden question of dev.json and capabilities-dev.json
(phrases, German and CJK terms included), at three title weights and under a document scope;
postings rebuilt after a write and never answering for another generation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.corpus import GOLDEN_CAPABILITIES, GOLDEN_DEV
from tests.helpers.indexes import use_copy
from truthbase.eval.golden import load_golden
from truthbase.records import ArmHit
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.store import SQLiteStore
from truthbase.store.copy import copy_sqlite_index
from truthbase.store.phrases import ascii_tokens, or_of_phrases
from truthbase.store.sqlite import postings as postings_module
from truthbase.store.sqlite import search
from truthbase.store.sqlite.postings import BUILD_AFTER_QUERIES, PostingsCache

pytestmark = pytest.mark.corpus


def expressions(golden: Path, languages: list[str | None]) -> list[str]:
    out = []
    for question in load_golden(golden).questions:
        expression = build_fts_query(question.question, languages=languages)
        if expression is not None:
            out.append(expression)
    return out


def pairs(hits: list[ArmHit]) -> list[tuple[int, int, float]]:
    return [(h.chunk_id, h.rank, h.score) for h in hits]


def fts5(store: SQLiteStore, expression: str, limit: int, weight: float, scope=None) -> list:  # type: ignore[no-untyped-def]
    return pairs(search.fts_search(store._db, expression, limit, weight, scope))


@pytest.mark.parametrize(
    ("index", "golden", "languages"),
    [
        ("golden_db", GOLDEN_DEV, ["en"]),
        ("capabilities_db", GOLDEN_CAPABILITIES, ["en", "de", "zh"]),
    ],
)
def test_postings_rank_as_fts5_does(
    index: str,
    golden: Path,
    languages: list[str | None],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    store = SQLiteStore(
        use_copy(request.getfixturevalue(index), tmp_path / "i.sqlite"), fts_postings_min_rows=1
    )
    try:
        assert store.prepare_postings()
        documents = [d.id for d in store.list_documents()]
        queries = expressions(golden, languages)
        # pseudo-relevance feedback repeats a phrase: bm25() counts it twice, so must they
        queries.append(f"{queries[0]} OR {queries[0].split(' OR ')[0]}")
        # phrases of two and three tokens as the index holds them (adjacent in some chunk)
        for (text,) in store._db.conn.execute(
            "SELECT text FROM chunks_fts_content ORDER BY id LIMIT 40 OFFSET 7"
        ).fetchall()[::10]:
            tokens = ascii_tokens(text)
            queries.append(f'"{" ".join(tokens[3:5])}" OR "{" ".join(tokens[8:11])}"')
        assert sum(" " in p for q in queries for p in q.split(" OR ")) >= 8
        compared = 0
        for expression in queries:
            assert or_of_phrases(expression) is not None  # the postings answer it, not FTS5
            for weight in (1.0, 0.0, 0.5):
                want = fts5(store, expression, 50, weight)
                got = pairs(store.fts_search(expression, 50, weight))
                assert got == want, (expression, weight)
                compared += bool(want)
            scope = documents[:2]
            assert pairs(store.fts_search(expression, 20, 1.0, scope)) == fts5(
                store, expression, 20, 1.0, scope
            )
        assert compared > 2 * len(queries)
        assert store._postings.builds == 1  # it was the postings that answered, once built
    finally:
        store.close()


@pytest.fixture
def store(seed_db: Path, tmp_path: Path) -> Iterator[SQLiteStore]:
    """A writable copy of the seed index whose full-text arm uses postings from the first row."""
    opened = SQLiteStore(use_copy(seed_db, tmp_path / "postings.sqlite"), fts_postings_min_rows=1)
    try:
        yield opened
    finally:
        opened.close()


def test_a_write_moves_the_postings_to_the_new_generation(
    store: SQLiteStore, seed_db: Path
) -> None:
    expression = expressions(GOLDEN_DEV, ["en"])[0]
    assert store.prepare_postings()
    before = store.fts_search(expression, 10, 1.0)
    victim = store.chunks([before[0].chunk_id])[0].doc_id
    gone = {h.chunk_id for h in store.fts_search(expression, 500, 1.0, [victim])}
    assert before[0].chunk_id in gone
    assert store.delete_document(victim)
    # Until the new generation's postings are built, FTS5 answers (the same ranking).
    after = store.fts_search(expression, 50, 1.0)
    assert not gone & {h.chunk_id for h in after}
    assert pairs(after) == fts5(store, expression, 50, 1.0)
    assert store.prepare_postings() and store._postings.builds == 2
    assert pairs(store.fts_search(expression, 50, 1.0)) == pairs(after)

    assert copy_sqlite_index(seed_db, store) == 1  # the deleted document, ingested again
    assert store.prepare_postings() and store._postings.builds == 3
    back = store.fts_search(expression, 10, 1.0)
    assert pairs(back) == fts5(store, expression, 10, 1.0)
    assert victim in {c.doc_id for c in store.chunks([h.chunk_id for h in back])}


def test_below_the_threshold_fts5_answers(seed_db: Path) -> None:
    store = SQLiteStore(seed_db, fts_postings_min_rows=10_000_000)
    try:
        assert not store.prepare_postings()
        expression = expressions(GOLDEN_DEV, ["en"])[1]
        assert pairs(store.fts_search(expression, 10, 1.0)) == fts5(store, expression, 10, 1.0)
        assert store._postings.builds == 0
    finally:
        store.close()


def test_only_the_builders_expressions_are_read_from_postings() -> None:
    assert or_of_phrases('"gv oc 03" OR "requir"') == [["gv", "oc", "03"], ["requir"]]
    assert or_of_phrases('"Größe" OR "ＡＢ"') == [["größe"], ["ＡＢ"]]  # only A-Z fold
    for other in ('text : ("a")', '"a" AND "b"', "a OR b", '"a" NEAR "b"', '"a" OR', ""):
        assert or_of_phrases(other) is None, other
    assert PostingsCache(None).postings(None) is None  # type: ignore[arg-type]


def test_a_one_shot_process_never_builds_them(store: SQLiteStore) -> None:
    # `truthbase ask` asks a question and its feedback query: FTS5 answers those, and the
    # postings are built (in the background) only from the fourth query of a generation on.
    expression = expressions(GOLDEN_DEV, ["en"])[2]
    want = fts5(store, expression, 20, 1.0)
    for _ in range(BUILD_AFTER_QUERIES):
        assert pairs(store.fts_search(expression, 20, 1.0)) == want
    assert store._postings.running() is None
    assert pairs(store.fts_search(expression, 20, 1.0)) == want
    thread = store._postings.running()
    assert thread is not None
    thread.join()
    assert store._postings.builds == 1
    assert pairs(store.fts_search(expression, 20, 1.0)) == want


def test_a_rename_moves_the_postings_to_the_new_title(store: SQLiteStore) -> None:
    assert store.prepare_postings()
    document = store.list_documents()[0]
    assert store.rename_document(document.id, "Xylophonequark handbook")
    assert store.prepare_postings() and store._postings.builds == 2
    for expression in ('"xylophonequark"', '"risk" OR "handbook"'):
        got = pairs(store.fts_search(expression, 20, 1.0))
        assert got == fts5(store, expression, 20, 1.0)
    assert got and store.fts_search('"xylophonequark"', 5, 1.0)


def test_a_long_phrase_must_match_every_token(store: SQLiteStore) -> None:
    # A quoted passage in a question is one phrase of many tokens: all must be adjacent.
    assert store.prepare_postings()
    (text,) = store._db.conn.execute(
        "SELECT text FROM chunks_fts_content WHERE length(text) > 600 ORDER BY id"
    ).fetchone()
    tokens = ascii_tokens(text)[:40]
    assert len(tokens) == 40
    whole = f'"{" ".join(tokens)}"'
    broken = f'"{" ".join([*tokens[:35], tokens[2], *tokens[36:]])}"'
    assert fts5(store, whole, 5, 1.0) and not fts5(store, broken, 5, 1.0)
    for expression in (whole, broken):
        assert pairs(store.fts_search(expression, 5, 1.0)) == fts5(store, expression, 5, 1.0)


def test_a_failed_build_is_not_retried_until_the_index_changes(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def fail(db: object) -> None:
        calls.append(db)
        raise MemoryError("simulated")

    monkeypatch.setattr(postings_module, "load_postings", fail)
    expression = expressions(GOLDEN_DEV, ["en"])[0]
    assert not store.prepare_postings()
    for _ in range(10):
        assert pairs(store.fts_search(expression, 10, 1.0)) == fts5(store, expression, 10, 1.0)
    assert len(calls) == 1 and store._postings.builds == 0
    assert store.delete_document(store.list_documents()[0].id)
    assert not store.prepare_postings() and len(calls) == 2
