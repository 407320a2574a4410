"""Agent mode with a real LLM: llama-cpp-python's server running SmolLM2-135M-Instruct on
127.0.0.1 is offered the book tools over Pride and Prejudice (a copy of golden_db).

The tiny model cannot be relied on to call tools (llama.cpp's chat template for it does not even
show them) or to copy position tags, so these tests assert the guarantees, not quality: the loop
reads the book before any answer is accepted; the events come in order; every citation shown as
verified has its quote in the stored unit text at its span, inside a source of this turn's tool
results; and when the model's answer does not stand (no tool call possible, no verified tag,
an error), the extractive agent answers and the events say so and why. The book tools show at
most 1,500 characters per call here, so that a turn fits SmolLM2's 4,096-token context.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.citations import recheck
from tests.helpers.corpus import PRIDE_TITLE as BOOK
from tests.helpers.indexes import copy_db
from tests.helpers.llm_server import LlamaServer, llama_cpp_missing
from tests.helpers.transcripts import dead_model
from truthbase.answer import (
    Agent,
    Answer,
    CitationsEvent,
    DoneEvent,
    ExtractiveAnswerer,
    SourcesEvent,
    TokenEvent,
    agent_events,
)
from truthbase.answer.agent_extractive import hybrid_ranker
from truthbase.config import AgentSettings, SegmentSettings, Settings
from truthbase.embed import Embedder
from truthbase.llm import OpenAIChatModel, with_fallbacks
from truthbase.llm.client import ToolCallingModel
from truthbase.modes import book_tools
from truthbase.segments.tools import RELATED_SEGMENTS
from truthbase.store import SQLiteStore

MISSING = llama_cpp_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""), pytest.mark.slow]


@pytest.fixture(scope="module")
def store(golden_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteStore]:
    s = SQLiteStore(copy_db(golden_db, tmp_path_factory.mktemp("agent-llm") / "book.sqlite"))
    yield s
    s.close()


def smol(llama: LlamaServer) -> OpenAIChatModel:
    return OpenAIChatModel(
        llama.model, base_url=llama.base_url, api_key="unused", max_tokens=48, name="smollm2"
    )


def agent(store: SQLiteStore, embedder: Embedder, model: ToolCallingModel) -> Agent:
    settings = Settings(
        db=Path("unused.sqlite"),
        segments=SegmentSettings(related_segments=1, tool_max_chars=1_500, passage_chars=300),
    )
    (book,) = [d.id for d in store.list_documents() if d.title == BOOK]
    return Agent(
        # The tools pick segments by search: SmolLM2 cannot read batches of summaries.
        toolbox=book_tools(settings, store, embedder, model=None, doc_ids=[book]),
        model=model,
        extractive=ExtractiveAnswerer(embedder),
        settings=AgentSettings(max_steps=3, timeout_s=120, total_timeout_s=300),
        rank=hybrid_ranker(store, settings.retrieval, enough=settings.agent.detail_sources),
    )


def run(store: SQLiteStore, embedder: Embedder, chosen: Agent, question: str) -> Answer:
    events = list(agent_events(store, embedder, question, chosen))
    kinds = [type(e) for e in events]
    assert kinds == [SourcesEvent, TokenEvent, CitationsEvent, DoneEvent], kinds
    done = events[-1]
    assert isinstance(done, DoneEvent)
    answer = done.answer
    recheck(store, answer)
    # Book first, whoever answered: a tool ran before the answer was accepted.
    assert answer.info["tools"], answer.info
    if answer.answerer == "agent-extractive":
        assert answer.info["fell_back_to"] == "agent-extractive"
        assert answer.info["fallback_reason"]
    else:
        assert answer.answerer == "agent:smollm2"
        assert answer.refused or any(c.verified for c in answer.citations)
    return answer


def test_smollm2_in_the_tool_loop_keeps_the_guarantees(
    llama: LlamaServer, store: SQLiteStore, embedder: Embedder
) -> None:
    answer = run(
        store, embedder, agent(store, embedder, smol(llama)), "In which county is Pemberley?"
    )
    print(
        f"\nSmolLM2 agent: answerer={answer.answerer} steps={answer.info.get('steps')} "
        f"forced_tool={answer.info.get('forced_tool')} "
        f"reason={answer.info.get('fallback_reason')!r} "
        f"model_text={str(answer.info.get('model_text', ''))[:160]!r} "
        f"timings={answer.timings}"
    )
    tools = answer.info.get("model_tools", answer.info["tools"])
    assert tools[0]["name"] == RELATED_SEGMENTS


def test_a_chain_of_dead_models_leaves_the_extractive_agent(
    store: SQLiteStore, embedder: Embedder
) -> None:
    chain = with_fallbacks([dead_model("dead-1"), dead_model("dead-2")])
    answer = run(store, embedder, agent(store, embedder, chain), "Who does Mr. Collins marry?")
    assert answer.answerer == "agent-extractive"
    assert [f["model"] for f in answer.info["failed"]] == ["dead-1", "dead-2"]
    assert "model error" in answer.info["fallback_reason"]
