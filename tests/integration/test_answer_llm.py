"""The answer pipeline with a real LLM: llama-cpp-python's server running SmolLM2-135M-Instruct
on 127.0.0.1 answers, rewrites and reranks over the seed index.

The tiny model answers poorly, so these tests assert the pipeline's guarantees, not quality:
events in order with the answer streamed, no citation marked verified unless its quote is in the
stored page text at its span (re-checked here with the one matcher), refusals parsed, garbage
handled, stages failing open, the fallback chain naming who answered, the extractive answerer
last. They skip only when llama_cpp is not installed (see tests/helpers/llm_server.py). Answers
are capped at 48 tokens and 3 sources, and the reranker sees 15 passages of 120 characters, so
that the module stays within about two minutes on a busy 2-core machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.indexes import copy_db
from tests.helpers.llm_server import LlamaServer, llama_cpp_missing
from tests.helpers.transcripts import closed_port_url, dead_model
from truthbase.answer import (
    Answer,
    CitationsEvent,
    DoneEvent,
    Event,
    ExtractiveAnswerer,
    LLMAnswerer,
    SourcesEvent,
    Stages,
    TokenEvent,
    answer_question,
)
from truthbase.cite import is_refusal
from truthbase.cli import cli
from truthbase.config import LLMSettings, RetrievalSettings
from truthbase.embed import Embedder
from truthbase.llm import ChatMessage, OpenAIChatModel, with_fallbacks
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore
from truthbase.text.matching import quote_in

MISSING = llama_cpp_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""), pytest.mark.slow]

K = 3
QUESTION = "What are the CSF 2.0 Functions and what does the AI RMF Core consist of?"


def smol(llama: LlamaServer, max_tokens: int = 48) -> OpenAIChatModel:
    return OpenAIChatModel(
        llama.model,
        base_url=llama.base_url,
        api_key="unused",
        max_tokens=max_tokens,
        name="smollm2",
    )


class Garbage:
    """A model that writes garbage: out-of-range markers, unresolvable tags, broken JSON."""

    def __init__(self, text: str) -> None:
        self.text = text

    @property
    def name(self) -> str:
        return "garbage"

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        return self.text

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]:
        return iter([self.text[:7], self.text[7:]])


def run(
    store: SQLiteStore,
    embedder: Embedder,
    answerer: LLMAnswerer,
    stages: Stages | None = None,
    question: str = QUESTION,
) -> tuple[list[Event], Answer]:
    events = list(
        answer_question(
            store, embedder, question, RetrievalSettings(), answerer=answerer, k=K, stages=stages
        )
    )
    kinds = [type(e) for e in events]
    assert kinds[0] is SourcesEvent and kinds[-1] is DoneEvent and kinds[-2] is CitationsEvent, (
        kinds
    )
    assert all(k is TokenEvent for k in kinds[1:-2])
    done = events[-1]
    assert isinstance(done, DoneEvent)
    return events, done.answer


def assert_guarantees(store: SQLiteStore, events: list[Event], answer: Answer) -> None:
    """No citation shown as verified unless its quote is on its page at its span; refusals
    parsed; every citation names a real source."""
    raw = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert answer.refused == (is_refusal(raw) or not answer.text)
    if answer.refused:
        assert answer.text == "NO_ANSWER" and not answer.citations
    numbers = {s.n for s in answer.sources}
    assert len(answer.sources) <= K
    assert len({s.chunk_id for s in answer.sources}) == len(answer.sources)
    for c in answer.citations:
        assert c.n in numbers
        if c.verified:
            unit = store.unit(c.doc_id, c.unit)
            assert unit is not None and c.quote
            assert quote_in(c.quote, unit.text[c.start : c.end]), c


def test_llm_answers_rewrites_and_reranks_through_the_pipeline(
    llama: LlamaServer, seed_store: SQLiteStore, embedder: Embedder
) -> None:
    model = smol(llama)
    answerer = LLMAnswerer(model, ExtractiveAnswerer(embedder), timeout=60)
    stages = Stages(
        model=smol(llama),
        settings=LLMSettings(
            rewrite_enabled=True,
            rewrite_timeout_s=30,
            rerank_enabled=True,
            rerank_timeout_s=15,
            rerank_chars=120,
        ),
    )
    events, answer = run(seed_store, embedder, answerer, stages)
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    print(f"\nSmolLM2 answer ({len(tokens)} tokens): {answer.text!r}")
    print(f"rewrite: {answer.info['rewrite']}\nrerank: {answer.info['rerank']}")
    print(f"citations: {[(c.n, c.verified, round(c.support, 2)) for c in answer.citations]}")
    print(f"problems: {answer.problems}\ntimings: {answer.timings}")
    assert answer.answerer == "smollm2" and answer.info["failed"] == []
    assert len(tokens) > 1  # streamed
    assert {"search", "rewrite", "rerank", "answer", "cite", "total"} <= set(answer.timings)
    rewrite = answer.info["rewrite"]
    assert 1 <= len(rewrite["queries"]) <= 3
    assert rewrite["rewritten"] or rewrite["queries"] == [QUESTION]
    assert "reranked" in answer.info["rerank"]
    assert_guarantees(seed_store, events, answer)


def test_stages_fail_open_and_the_extractive_answerer_answers_last(
    llama: LlamaServer, seed_store: SQLiteStore, embedder: Embedder
) -> None:
    tiny = 0.001
    answerer = LLMAnswerer(smol(llama), ExtractiveAnswerer(embedder), timeout=tiny)
    stages = Stages(
        model=smol(llama),
        settings=LLMSettings(
            rewrite_enabled=True,
            rewrite_timeout_s=tiny,
            rerank_enabled=True,
            rerank_timeout_s=tiny,
        ),
    )
    events, answer = run(seed_store, embedder, answerer, stages)
    plain = search(seed_store, embedder, QUESTION, RetrievalSettings(), k=K)
    assert [s.chunk_id for s in answer.sources] == [h.chunk.id for h in plain.hits]
    assert answer.info["rewrite"]["rewritten"] is False
    assert answer.info["rewrite"]["reason"].startswith("timeout")
    assert answer.info["rerank"]["reranked"] is False
    assert answer.info["rerank"]["reason"].startswith("timeout")
    assert answer.answerer == "extractive" and answer.info["fell_back_to"] == "extractive"
    assert answer.info["failed"] == [
        {"model": "smollm2", "error": "smollm2: timed out", "timed_out": True}
    ]
    assert_guarantees(seed_store, events, answer)


def test_an_all_failing_chain_falls_back_to_extractive_and_says_so(
    seed_store: SQLiteStore, embedder: Embedder
) -> None:
    chain = with_fallbacks([dead_model("dead-1"), dead_model("dead-2")])
    events, answer = run(
        seed_store, embedder, LLMAnswerer(chain, ExtractiveAnswerer(embedder), timeout=5)
    )
    assert answer.answerer == "extractive"
    assert [f["model"] for f in answer.info["failed"]] == ["dead-1", "dead-2"]
    assert not answer.refused and answer.citations and all(c.verified for c in answer.citations)
    assert_guarantees(seed_store, events, answer)


def test_garbage_output_is_handled(seed_store: SQLiteStore, embedder: Embedder) -> None:
    garbage = Garbage('The Functions are many[99]. See [f999-0-99999] and {"order": [ }} [1]')
    stages = Stages(
        model=garbage,
        settings=LLMSettings(
            rewrite_enabled=True, rewrite_timeout_s=5, rerank_enabled=True, rerank_timeout_s=5
        ),
    )
    answerer = LLMAnswerer(garbage, ExtractiveAnswerer(embedder), timeout=5)
    events, answer = run(seed_store, embedder, answerer, stages)
    assert answer.answerer == "garbage"
    assert answer.info["rerank"]["reranked"] is False
    assert answer.info["rerank"]["reason"].startswith("unparseable")
    assert answer.info["rewrite"]["rewritten"] is False
    assert any("[99] names no source" in p for p in answer.problems)
    assert any("[f999-0-99999]" in p for p in answer.problems)
    assert "[99]" not in answer.text and "[f999" not in answer.text
    assert_guarantees(seed_store, events, answer)
    refusal = LLMAnswerer(
        Garbage("NO_ANSWER, although [1] might say"), ExtractiveAnswerer(embedder), timeout=5
    )
    events, answer = run(seed_store, embedder, refusal)
    assert answer.refused and answer.text == "NO_ANSWER" and not answer.citations


def test_a_closed_port_primary_falls_back_to_the_llama_server_from_the_cli(
    llama: LlamaServer, seed_db: Path, tmp_path: Path
) -> None:
    db = copy_db(seed_db, tmp_path / "llm.sqlite")
    env = {
        "TRUTHBASE_LLM__BASE_URL": closed_port_url(),
        "TRUTHBASE_LLM__MODEL": "gone",
        "TRUTHBASE_LLM__MAX_TOKENS": "48",
        "TRUTHBASE_LLM__TIMEOUT_S": "60",
        "TRUTHBASE_LLM__FALLBACKS": json.dumps(
            [{"base_url": llama.base_url, "model": llama.model}]
        ),
    }
    result = CliRunner().invoke(
        cli, ["--db", str(db), "ask", QUESTION, "--json", "--k", "1"], env=env
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    print(f"\nvia the CLI, {data['answerer']}: {data['text']!r}")
    assert data["answerer"] == f"{llama.model}@{llama.base_url}"
    assert [f["model"] for f in data["info"]["failed"]] == [
        f"gone@{env['TRUTHBASE_LLM__BASE_URL']}"
    ]
    assert data["id"] is not None
    result = CliRunner().invoke(cli, ["--db", str(db), "verify"])
    assert result.exit_code == 0, result.output
