"""Every door carries a quote_only citation's conflict (issue 24 item 5): the failing check, the
two sides and the page's side as offsets of the unit text with its rects. Over a copy of the
seed index, with the answers written by a scripted model (tests/helpers/conflicts.py) through
the Python API, the chat events, ``ask --json``, MCP's ask and verify_claim, and
``verify-claim --json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers import indexes
from tests.helpers.conflicts import DEPARTING, DepartingClaim, departing_model
from tests.helpers.transcripts import Scripted, scripted_server
from truthbase import Library
from truthbase.answer import CitationsEvent
from truthbase.cli import cli
from truthbase.config import LLMSettings, Settings
from truthbase.embed import Embedder
from truthbase.mcp.tools import call_tool
from truthbase.server import create_app
from truthbase.store import SQLiteStore

NUMBER, DIRECTION = DEPARTING


@pytest.fixture(scope="module")
def model() -> Iterator[Scripted]:
    with scripted_server() as scripted:
        scripted.responder = departing_model
        yield scripted


@pytest.fixture(scope="module")
def settings(seed_db: Path, tmp_path_factory: pytest.TempPathFactory, model: Scripted) -> Settings:
    db = indexes.use_copy(seed_db, tmp_path_factory.mktemp("conflict") / "conflict.sqlite")
    return Settings(db=db, llm=LLMSettings(base_url=model.base_url, model="scripted"))


@pytest.fixture(scope="module")
def library(settings: Settings, embedder: Embedder) -> Iterator[Library]:
    with Library(settings.db, settings=settings, embedder=embedder) as lib:
        yield lib


def _unit_text(settings: Settings, doc_id: str, unit: int) -> str:
    store = SQLiteStore(settings.db)
    try:
        stored = store.unit(doc_id, unit)
    finally:
        store.close()
    assert stored is not None
    return stored.text


def _check(settings: Settings, citation: dict[str, Any], case: DepartingClaim) -> None:
    """The citation record of ``case``'s claim has its conflict, the page side located."""
    assert citation["state"] == "quote_only", citation
    conflict = citation["conflict"]
    assert conflict is not None, citation
    assert conflict["code"] == case.code
    assert conflict["claim_says"] == case.claim_says
    assert conflict["page_says"].startswith(case.page_says)
    assert conflict["text"].startswith(f"the answer says {case.claim_says} · the page says ")
    start, end = conflict["page_start"], conflict["page_end"]
    assert citation["start"] <= start < end <= citation["end"]
    assert _unit_text(settings, citation["doc_id"], citation["unit"])[start:end] == case.page_says


def _cited(citations: list[dict[str, Any]], case: DepartingClaim) -> dict[str, Any]:
    (citation,) = [c for c in citations if c["claim"].strip() == case.claim]
    return citation


@pytest.mark.parametrize("case", DEPARTING, ids=["number", "direction"])
def test_the_python_api(library: Library, settings: Settings, case: DepartingClaim) -> None:
    events = list(library.ask(case.question, mode="llm"))
    (cited,) = [e for e in events if isinstance(e, CitationsEvent)]
    citation = next(c for c in cited.citations if c.claim.strip() == case.claim)
    assert citation.conflict is not None and citation.conflict.rects
    _check(settings, citation.to_json(), case)


def test_the_chat_events(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        body = {"question": NUMBER.question, "mode": "llm"}
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            text = response.read().decode()
    events = {}
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events[fields["event"]] = json.loads(fields["data"])
    citation = _cited(events["citations"]["citations"], NUMBER)
    _check(settings, citation, NUMBER)
    assert citation["conflict"]["rects"] and all(len(r) == 4 for r in citation["conflict"]["rects"])
    assert _cited(events["done"]["answer"]["citations"], NUMBER)["conflict"] == citation["conflict"]


def test_ask_json(settings: Settings, model: Scripted) -> None:
    env = {"TRUTHBASE_LLM__BASE_URL": model.base_url, "TRUTHBASE_LLM__MODEL": "scripted"}
    result = CliRunner().invoke(
        cli,
        ["--db", str(settings.db), "ask", DIRECTION.question, "--mode", "llm", "--json"],
        env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    _check(settings, _cited(json.loads(result.stdout)["citations"], DIRECTION), DIRECTION)


def test_mcp_ask_and_verify_claim(library: Library, settings: Settings) -> None:
    asked = call_tool(library, "ask", {"question": DIRECTION.question, "mode": "llm"})
    assert not asked.is_error, asked.content
    assert asked.structured_content is not None
    citation = _cited(asked.structured_content["citations"], DIRECTION)
    _check(settings, citation, DIRECTION)
    assert "rects" not in citation["conflict"]  # as a citation's own: boxes are not for a model
    verdict = call_tool(
        library,
        "verify_claim",
        {
            "doc": citation["doc_id"],
            "unit": citation["unit"],
            "quote": citation["quote"],
            "claim": DIRECTION.claim,
        },
    )
    assert not verdict.is_error, verdict.content
    row = verdict.structured_content
    assert row is not None and row["conflict"]["code"] == DIRECTION.code
    assert (row["conflict"]["page_start"], row["conflict"]["page_end"]) == (
        citation["conflict"]["page_start"],
        citation["conflict"]["page_end"],
    )


def test_verify_claim_json(library: Library, settings: Settings) -> None:
    events = list(library.ask(NUMBER.question, mode="llm"))
    (cited,) = [e for e in events if isinstance(e, CitationsEvent)]
    citation = next(c for c in cited.citations if c.claim.strip() == NUMBER.claim)
    result = CliRunner().invoke(
        cli,
        [
            "--db", str(settings.db), "verify-claim", "--doc", citation.doc_id,
            "--unit", str(citation.unit), "--quote", citation.quote, "--claim", NUMBER.claim,
            "--json",
        ],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # quote_only
    verdict = json.loads(result.stdout)
    assert verdict["state"] == "quote_only"
    _check(settings, verdict, NUMBER)
    assert verdict["conflict"]["rects"]
