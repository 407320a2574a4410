"""Follow-up questions through every door over the seed index: the application service, the
chat route (``history`` in, ``searched_for`` in the done event), ``truthbase ask --history`` and
the MCP ask tool. Extractive answers: the resolution without a model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from truthbase.answer import DoneEvent
from truthbase.answer.model import SourcesEvent
from truthbase.answer.pipeline import answer_question, retrieve
from truthbase.app import Service
from truthbase.config import Settings
from truthbase.conversation import resolve_follow_up
from truthbase.embed import Embedder
from truthbase.llm.rerank import WINDOW
from truthbase.llm.rewrite import fuse_subqueries
from truthbase.mcp.tools import call_tool
from truthbase.server import create_app
from truthbase.store import SQLiteStore
from truthbase.turns import Resolution, Turn

pytestmark = pytest.mark.slow

FIRST = "How does RAPTOR segment the retrieval corpus before building its tree?"
FOLLOW_UP = "What are they embedded with?"
NEW_TOPIC = "Which CSF 2.0 subcategory covers risk appetite and risk tolerance statements?"


def _done(service: Service, question: str, history: list[Turn]) -> DoneEvent:
    events = list(service.ask(question, mode="extractive", history=history, record=False))
    done = events[-1]
    assert isinstance(done, DoneEvent), events[-1]
    return done


@pytest.fixture(scope="module")
def service(seed_db: Path, embedder: Embedder) -> Iterator[Service]:
    store = SQLiteStore(seed_db)
    try:
        yield Service(store, Settings(db=seed_db), lambda: embedder)
    finally:
        store.close()


@pytest.fixture(scope="module")
def thread(service: Service) -> list[Turn]:
    first = _done(service, FIRST, [])
    assert first.resolution is None  # a question on its own is searched as asked
    assert first.answer.citations, first.answer.text
    return [first.answer.as_turn(FIRST)]


def _raptor_id(service: Service) -> str:
    return next(d.id for d in service.documents() if "raptor" in d.path.lower())


def test_a_follow_up_is_resolved_and_prefers_the_cited_document(
    service: Service, thread: list[Turn]
) -> None:
    done = _done(service, FOLLOW_UP, thread)
    resolution = done.resolution
    assert resolution is not None and resolution.kind == "resolved"
    assert resolution.searched_for.startswith(FOLLOW_UP)
    assert "raptor" in resolution.searched_for.casefold()
    assert resolution.prior_documents == (_raptor_id(service),)
    assert done.answer.sources[0].doc_id == _raptor_id(service)
    data = done.to_json()
    assert data["searched_for"] == resolution.searched_for
    assert data["resolution"]["kind"] == "resolved"
    # Asked as written, the question finds no RAPTOR passage first: the thread is what helped.
    alone = _done(service, FOLLOW_UP, [])
    assert alone.answer.sources[0].doc_id != _raptor_id(service)


def test_other_phrasings_are_searched_and_fused(
    service: Service, thread: list[Turn], seed_db: Path, embedder: Embedder
) -> None:
    # A rewritten follow-up also searches its resolution without a model (``also_searched``):
    # the two rankings (each to the fusion's depth) in one reciprocal-rank fusion, so what that
    # phrasing finds first is among the sources even where the question alone does not find it.
    resolved = resolve_follow_up(FOLLOW_UP, thread).searched_for
    settings = Settings().retrieval
    store = SQLiteStore(seed_db)
    try:

        def ranked(query: str, k: int) -> list[int]:
            return [h.chunk.id for h in retrieve(store, embedder, query, settings, k=k).hits]

        alone, other = ranked(FOLLOW_UP, WINDOW), ranked(resolved, WINDOW)
        fused = retrieve(store, embedder, FOLLOW_UP, settings, k=8, also_searched=(resolved,))
        rewritten = Resolution(
            question=FOLLOW_UP,
            searched_for=FOLLOW_UP,  # standing for a model's rewrite
            kind="rewritten",
            reason="scripted",
            also_searched=(resolved,),
        )
        events = list(answer_question(store, embedder, FOLLOW_UP, follow_up=rewritten))
    finally:
        store.close()
    both = [h.chunk.id for h in fused.hits]
    assert other[0] not in alone[:8]  # the phrasing finds what the question alone does not
    assert both == fuse_subqueries([alone, other], settings.rrf_k)[:8]
    assert other[0] in both and fused.info["also_searched"] == [resolved]
    # answer_question searches a resolution's other phrasings too.
    sources = next(e for e in events if isinstance(e, SourcesEvent)).sources
    assert [s.chunk_id for s in sources] == both


def test_a_new_topic_in_the_thread_is_searched_as_asked(
    service: Service, thread: list[Turn]
) -> None:
    done = _done(service, NEW_TOPIC, thread)
    assert done.resolution is not None and done.resolution.kind == "standalone"
    assert done.resolution.searched_for == NEW_TOPIC
    assert done.resolution.prior_documents == ()
    alone = _done(service, NEW_TOPIC, [])
    assert [s.chunk_id for s in done.answer.sources] == [s.chunk_id for s in alone.answer.sources]


def test_a_follow_up_naming_another_document_prefers_it(
    service: Service, thread: list[Turn]
) -> None:
    # The service passes the titles of the documents the asker may see: "Self-RAG" names one.
    done = _done(service, "Is that similar to how Self-RAG prepares its corpus?", thread)
    resolution = done.resolution
    assert resolution is not None and resolution.kind == "resolved"
    self_rag = next(d.id for d in service.documents() if "self-rag" in d.path.lower())
    assert resolution.prior_documents == (self_rag,)
    assert "raptor" not in resolution.context_words  # the earlier document's name stays out
    assert resolution.compared  # a comparison: the earlier answer's spans are its other side


def test_a_comparison_keeps_the_passage_the_earlier_answer_cited(
    service: Service, thread: list[Turn], seed_db: Path, embedder: Embedder
) -> None:
    # A comparison's earlier side is the passage the previous answer cited: when the search
    # for the new side does not bring it back, its quote is looked up in its document and
    # takes the last place among the sources, so the answer can show both sides.
    cited = thread[0].citations[0]
    settings = Settings().retrieval
    query = "What does the CSF 2.0 GOVERN Function cover?"

    def holds(hit: Any) -> bool:
        c = hit.chunk
        return (c.doc_id, c.unit) == (cited.doc_id, cited.unit) and (
            c.start < cited.end and cited.start < c.end
        )

    store = SQLiteStore(seed_db)
    try:
        plain = retrieve(store, embedder, query, settings, k=WINDOW)
        kept = retrieve(store, embedder, query, settings, k=8, kept=(cited,))
        elsewhere = frozenset(d.id for d in service.documents()) - {cited.doc_id}
        scoped = retrieve(store, embedder, query, settings, k=8, kept=(cited,), doc_ids=elsewhere)
    finally:
        store.close()
    assert not any(holds(h) for h in plain.hits)  # the search alone does not find it
    assert holds(kept.hits[7]) and not any(holds(h) for h in kept.hits[:7])
    assert kept.info["kept"] == kept.hits[7].chunk.id
    # A document the question may not see stays out, kept or not.
    assert not any(h.chunk.doc_id == cited.doc_id for h in scoped.hits)
    assert scoped.info["kept"] is None


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_the_chat_route_takes_the_thread(seed_db: Path, thread: list[Turn]) -> None:
    history = [t.to_json() for t in thread]
    with TestClient(create_app(Settings(db=seed_db))) as client:
        body = {"question": FOLLOW_UP, "mode": "extractive", "history": history}
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            events = _sse(response.read().decode())
        kind, done = events[-1]
        assert kind == "done"
        assert "raptor" in done["searched_for"].casefold()
        assert done["resolution"]["kind"] == "resolved"
        # Without a thread the done event is as before.
        with client.stream("POST", "/api/chat", json={"question": FIRST}) as response:
            assert "searched_for" not in _sse(response.read().decode())[-1][1]
        bad = [{**history[0], "citations": [{"doc_id": "x", "unit": -1, "start": 0, "end": 1}]}]
        for wrong in (bad, [{"answer": "no question"}], [{"question": "q"}] * 21, "text"):
            response = client.post("/api/chat", json={"question": FOLLOW_UP, "history": wrong})
            assert response.status_code == 422, wrong


def test_ask_takes_a_history_file(seed_db: Path, tmp_path: Path) -> None:
    from truthbase.cli import cli

    def ask(*args: str) -> Any:
        result = CliRunner().invoke(cli, ["--db", str(seed_db), "ask", "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    first = ask("--mode", "extractive", FIRST)
    assert "searched_for" not in first
    assert first["turn"]["question"] == FIRST
    history = tmp_path / "thread.json"
    history.write_text(json.dumps([first["turn"]]))
    second = ask("--mode", "extractive", "--history", str(history), FOLLOW_UP)
    assert "raptor" in second["searched_for"].casefold()
    assert second["turn"]["searched_for"] == second["searched_for"]
    # As text: the line that says what was searched is a line of its own after the answer
    # (it was glued to the answer's last streamed sentence).
    result = CliRunner().invoke(
        cli,
        ["--db", str(seed_db), "ask", "--mode", "extractive", "--history", str(history), FOLLOW_UP],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("searched for: ") for line in lines), result.output
    assert lines[0].strip() and "searched for" not in lines[0], result.output
    history.write_text(json.dumps([{"answer": "no question"}]))
    result = CliRunner().invoke(
        cli, ["--db", str(seed_db), "ask", "--history", str(history), FOLLOW_UP]
    )
    assert result.exit_code == 2 and "question" in result.output


def test_the_mcp_ask_tool_takes_the_thread(service: Service, thread: list[Turn]) -> None:
    history = [t.to_json() for t in thread]
    result = call_tool(
        service, "ask", {"question": FOLLOW_UP, "mode": "extractive", "history": history}
    )
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert "raptor" in result.structured_content["searched_for"].casefold()
    wrong = call_tool(service, "ask", {"question": FOLLOW_UP, "history": [{"question": 3}]})
    assert wrong.is_error
