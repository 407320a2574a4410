"""Real tool-calling models behind llama.cpp's server, at a small local model's 4,096 tokens.

Qwen2.5-Coder-0.5B-Instruct answers in LLM mode from more sources than its context holds: the
answerer fits them (the lowest ranked dropped, as ``info["budget"]`` says), no provider error
occurs, and every citation shown as verified has its quote on its page; the fitted prompt is
counted with the model's own tokenizer too. Qwen2.5-Coder-1.5B-
Instruct (``slow``) runs agent mode over Pride and Prejudice with the default tool output
(30,000 characters, which overflowed its context before the budget): the model itself calls
``get_related_segment_summaries``, the result fits, and its own answer stands with a tag it
copied that is ``supported`` (no refusal, no fallback).

The models come from PyPI packages (scripts/install.sh llm), assembled once into the user cache
(tests/helpers/llm_server.py); the modules skip only without llama_cpp.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.citations import recheck
from tests.helpers.corpus import PRIDE_TITLE
from tests.helpers.indexes import copy_db
from tests.helpers.llm_server import LlamaServer, llama_cpp_missing, served_requests
from truthbase.answer import (
    Agent,
    Answer,
    CitationsEvent,
    DoneEvent,
    ExtractiveAnswerer,
    LLMAnswerer,
    SourcesEvent,
    TokenEvent,
    agent_events,
    answer_question,
)
from truthbase.answer.agent_extractive import hybrid_ranker
from truthbase.answer.pipeline import sources_from_hits
from truthbase.cite import is_refusal
from truthbase.config import AgentSettings, RetrievalSettings, Settings
from truthbase.embed import Embedder
from truthbase.llm import OpenAIChatModel
from truthbase.llm.answer import fit_answer_sources
from truthbase.llm.budget import MESSAGE_OVERHEAD_TOKENS
from truthbase.llm.prompts import build_answer_messages
from truthbase.modes import book_tools
from truthbase.records import Source
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore
from truthbase.text.matching import quote_in

MISSING = llama_cpp_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""), pytest.mark.slow]


def qwen(server: LlamaServer, max_tokens: int, context: int = 4096) -> OpenAIChatModel:
    return OpenAIChatModel(
        server.model,
        base_url=server.base_url,
        api_key="unused",
        max_tokens=max_tokens,
        context_tokens=context,
        name=server.model,
    )


def _real_tokens(server: LlamaServer, text: str) -> int:
    """The model's own token count of ``text`` (llama-cpp-python's /extras/tokenize)."""
    root = server.base_url.removesuffix("/v1")
    request = urllib.request.Request(
        f"{root}/extras/tokenize",
        data=json.dumps({"input": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return len(json.loads(response.read())["tokens"])


QUESTION = "Who is the primary audience the CSF is written for?"


def _sources(store: SQLiteStore, embedder: Embedder, k: int) -> list[Source]:
    result = search(store, embedder, QUESTION, RetrievalSettings(), k=k)
    return sources_from_hits(result.hits)


def test_sixteen_sources_fitted_to_4096_tokens_fit_by_the_models_own_tokenizer(
    qwen05: LlamaServer, seed_store: SQLiteStore, embedder: Embedder
) -> None:
    """The estimate (3 characters a token) against Qwen's tokenizer on the real prompt: the
    fitted prompt and the reply's max_tokens stay within the 4,096 tokens the server has."""
    sources = _sources(seed_store, embedder, 16)
    model = qwen(qwen05, 1024)
    fitted, budget = fit_answer_sources(model, QUESTION, sources)
    assert budget["dropped"] and len(fitted) < 16
    messages = build_answer_messages(QUESTION, fitted)
    real = sum(_real_tokens(qwen05, m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages)
    print(f"\nfitted prompt: {real} real tokens, budget {budget}")
    assert real + model.reply_tokens() <= 4096
    assert real > 4096 // 3  # the budget used the room, not a sliver of it


def test_qwen05_answers_from_sources_fitted_to_its_context(
    qwen05: LlamaServer, seed_store: SQLiteStore, embedder: Embedder
) -> None:
    """The LLM answerer through the 0.5B with a 2,048-token budget (a quarter of the prompt
    work of 4,096 on 2 cores): the lowest-ranked of 8 sources dropped, the model answers (no
    provider error), and nothing unverified is shown as verified."""
    model = qwen(qwen05, 96, context=2048)
    answerer = LLMAnswerer(model, ExtractiveAnswerer(embedder), timeout=240)
    events = list(
        answer_question(seed_store, embedder, QUESTION, RetrievalSettings(), answerer=answerer, k=8)
    )
    kinds = [type(e) for e in events]
    assert kinds[0] is SourcesEvent and kinds[-2:] == [CitationsEvent, DoneEvent], kinds
    done = events[-1]
    assert isinstance(done, DoneEvent)
    answer = done.answer
    print(f"\n0.5B: {answer.text!r}\nbudget: {answer.info.get('budget')}")
    print(f"citations: {[(c.n, c.verified) for c in answer.citations]}; {answer.timings}")
    assert answer.answerer == qwen05.model and answer.info["failed"] == []
    budget = answer.info["budget"]
    assert budget["context_tokens"] == 2048 and budget["dropped"]
    assert max(budget["dropped"]) == 8 and min(budget["dropped"]) > 1
    assert all(" 400 " not in line for line in served_requests(qwen05)), served_requests(qwen05)
    raw = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert answer.refused == (is_refusal(raw) or not answer.text)
    if answer.refused:
        assert answer.text == "NO_ANSWER" and not answer.citations
    numbers = {s.n for s in answer.sources}
    for c in answer.citations:
        assert c.n in numbers
        if c.verified:
            unit = seed_store.unit(c.doc_id, c.unit)
            assert unit is not None and c.quote
            assert quote_in(c.quote, unit.text[c.start : c.end]), c


@pytest.fixture(scope="module")
def book_store(golden_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteStore]:
    s = SQLiteStore(copy_db(golden_db, tmp_path_factory.mktemp("qwen-agent") / "book.sqlite"))
    yield s
    s.close()


def _agent(store: SQLiteStore, embedder: Embedder, model: OpenAIChatModel) -> Agent:
    settings = Settings(db=Path("unused.sqlite"))  # the default tool output: 30,000 characters
    (book,) = [d.id for d in store.list_documents() if d.title == PRIDE_TITLE]
    return Agent(
        # Search picks the segments (the model's picks would cost a call per batch).
        toolbox=book_tools(settings, store, embedder, model=None, doc_ids=[book]),
        model=model,
        extractive=ExtractiveAnswerer(embedder),
        # llama-cpp-python's chatml-function-calling template renders no role:tool message.
        # Three steps: its call (or, after a reply without one, the named call), one more
        # offer of the tools, the answer; a fourth would only re-read the prompt (minutes).
        settings=AgentSettings(
            max_steps=3, timeout_s=300, total_timeout_s=900, tool_results_as="user"
        ),
        rank=hybrid_ranker(store, settings.retrieval, enough=settings.agent.detail_sources),
    )


def test_qwen15_calls_book_tools_itself_and_its_copied_tag_verifies(
    qwen15: LlamaServer, book_store: SQLiteStore, embedder: Embedder
) -> None:
    """With the default 30,000-character tool output (29,928 tokens' worth overflowed this
    model before): no provider error, the model itself calls get_related_segment_summaries
    (tool_calls from the server), reads a result fitted to its window, and its own answer
    stands: not a refusal, not the extractive fallback, a tag the model copied (not one made
    from a section id) that names a passage a tool showed and passes the support checks."""
    # Search shows the passage that answers it; the model's answer ("... is Derbyshire", the
    # county its estate is in) is supported by that passage, what the checks can say.
    question = "What is the name of Mr. Darcy's estate?"
    events = list(
        agent_events(
            book_store, embedder, question, _agent(book_store, embedder, qwen(qwen15, 160))
        )
    )
    assert [type(e) for e in events] == [SourcesEvent, TokenEvent, CitationsEvent, DoneEvent]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    answer: Answer = done.answer
    print(f"\n1.5B agent: {answer.text!r}\ninfo: {json.dumps(answer.info, default=str)[:1500]}")
    recheck(book_store, answer)
    assert all(" 400 " not in line for line in served_requests(qwen15)), served_requests(qwen15)
    tools = answer.info.get("tools", []) + answer.info.get("model_tools", [])
    own = [t for t in tools if not t["forced"]]
    assert own, tools  # the model called a tool itself, not only the loop for it
    assert own[0]["name"] == "get_related_segment_summaries", tools
    assert answer.info["failed"] == [], answer.info
    # The model's own answer stands: no fallback, no refusal.
    assert "fallback_reason" not in answer.info, answer.info.get("fallback_reason")
    assert answer.answerer == f"agent:{qwen15.model}", answer.info
    assert not answer.refused and answer.text != "NO_ANSWER"
    assert "section_citations" not in answer.info  # the tag is the model's, not a section's
    copied = [c for c in answer.citations if c.via == "tag" and c.state == "supported"]
    assert copied, (answer.text, answer.problems, [(c.via, c.state) for c in answer.citations])
    assert all(c.verified for c in copied), copied  # recheck: each inside a shown source
