"""Agent mode in the chat page: an overview question over the books consults hundreds of
passages; the page lists the cited ones and says how many it left out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import LiveServer

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)


def _event(stream: str, name: str) -> dict[str, Any]:
    """The data of the first server-sent event called ``name``."""
    for block in stream.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if lines.get("event") == name:
            data: dict[str, Any] = json.loads(lines["data"])
            return data
    raise AssertionError(f"no {name} event in the stream")


def test_agent_overview_lists_cited_sources_only(
    page: Any, golden_db: Path, tmp_path: Path
) -> None:
    db = tmp_path / "agent.sqlite"
    shutil.copy(golden_db, db)  # the book tools write the segment index
    with LiveServer(db) as server:
        responses: list[Any] = []
        page.on("response", lambda r: responses.append(r) if r.url.endswith("/api/chat") else None)
        page.goto(server.url)
        page.select_option("#mode", "agent")
        page.fill("#question", "What is this book about?")
        page.press("#question", "Enter")
        page.wait_for_function(ANSWERED, timeout=240_000)
        assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
        consulted = len(_event(responses[0].text(), "sources")["sources"])
        cited = {
            int(n)
            for n in page.locator("#answer .cite").evaluate_all("els => els.map(e => e.dataset.n)")
        }
        listed = page.locator("#sources li.source:not(.source-more)")
        more = page.locator("#sources li.source-more")
        assert cited and consulted > 12
        assert listed.count() == len(cited)
        assert {
            int(n)
            for n in listed.locator("button").evaluate_all("els => els.map(e => e.dataset.n)")
        } == cited
        assert more.count() == 1
        assert str(consulted - len(cited)) in more.inner_text()
