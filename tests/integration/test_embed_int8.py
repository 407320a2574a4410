"""``minilm-int8``: the bundled model with its products in int8, made from the real bundled file
into a cache folder, close to the bundled model and yet an embedder of its own."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.helpers.embed_texts import TEXTS
from truthbase.config import EmbedderSettings
from truthbase.embed import (
    DEFAULT_MODEL_ID,
    INT8_MODEL_ID,
    EmbedderMismatchError,
    EmbeddingError,
    OnnxEmbedder,
    _int8,
    bundled_model_files,
    check_compatible,
    default_embedder,
    load_embedder,
)
from truthbase.embed._onnx import file_sha256


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        yield folder / "truthbase" / "models"


@pytest.fixture(scope="module")
def int8(cache: Path) -> OnnxEmbedder:
    embedder = load_embedder(EmbedderSettings(name="minilm-int8"))
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


def test_the_int8_model_is_made_into_the_cache_with_its_products_in_int8(
    int8: OnnxEmbedder, cache: Path
) -> None:
    assert int8.model_path.parent == cache
    graph = onnx.load(str(int8.model_path)).graph
    weights = {init.name for init in graph.initializer}
    float_products = [
        node for node in graph.node if node.op_type == "MatMul" and set(node.input) & weights
    ]
    assert sum(node.op_type == "MatMulInteger" for node in graph.node) >= 24
    assert len(float_products) == 6  # the feed-forward output products stay float32
    assert not any(node.op_type == "IsNaN" for node in graph.node)
    assert list(cache.iterdir()) == [int8.model_path]  # nothing half-made left beside it


def test_its_vectors_are_close_to_the_bundled_models_but_not_the_same(int8: OnnxEmbedder) -> None:
    assert int8.model_id == INT8_MODEL_ID and int8.dim == 384
    ours, bundled = int8.embed(TEXTS), default_embedder().embed(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, rtol=1e-5)
    cosines = np.sum(ours * bundled, axis=1)
    assert cosines.min() > 0.98
    assert not np.array_equal(ours, bundled)
    query, para, other = int8.embed(
        [
            "How should an organization govern AI risk?",
            "Governance of artificial intelligence risks within a company.",
            "Bake the bread at 220 degrees for thirty minutes.",
        ]
    )
    assert float(query @ para) > float(query @ other) + 0.3
    _, tokens = int8.embed_with_tokens(TEXTS[:2])
    assert tokens is not None and tokens[1].tokens[:2] == ("rap", "##tor")


def test_an_index_of_one_refuses_the_other_and_names_the_setting(int8: OnnxEmbedder) -> None:
    with pytest.raises(EmbedderMismatchError, match="TRUTHBASE_EMBEDDER__NAME=minilm-int8"):
        check_compatible(INT8_MODEL_ID, 384, default_embedder())
    with pytest.raises(EmbedderMismatchError, match="TRUTHBASE_EMBEDDER__NAME=minilm to use"):
        check_compatible(DEFAULT_MODEL_ID, 384, int8)
    check_compatible(INT8_MODEL_ID, 384, int8)


def test_the_copy_is_made_once_and_a_folder_that_cannot_be_written_is_a_clear_error(
    int8: OnnxEmbedder, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = bundled_model_files()
    digest = file_sha256(str(model.resolve()))

    def refuse(source: Path, target: Path) -> None:
        raise AssertionError("made again")

    with monkeypatch.context() as patch:
        patch.setattr(_int8, "quantize", refuse)
        assert _int8.quantized_model(model, digest, cache) == int8.model_path

    # The setting names another folder; a making folder a killed process left there goes.
    another = tmp_path / "another"
    stale = another / ".making-killed"
    stale.mkdir(parents=True)
    (stale / "half.onnx").write_bytes(b"half a model")
    os.utime(stale, (time.time() - 2 * _int8.STALE_MAKING_S,) * 2)
    embedder = load_embedder(EmbedderSettings(name="minilm-int8", cache_dir=another))
    assert isinstance(embedder, OnnxEmbedder)
    made = embedder.model_path
    assert made.parent == another
    assert made.read_bytes() == int8.model_path.read_bytes()  # the recipe gives the same file
    assert [p.name for p in made.parent.iterdir()] == [made.name]  # no working files left

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    with pytest.raises(
        EmbeddingError, match=r"cannot keep the int8 copy .* set TRUTHBASE_EMBEDDER__CACHE_DIR"
    ):
        _int8.quantized_model(model, digest, blocked / "models")
