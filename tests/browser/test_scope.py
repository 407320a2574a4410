"""The chat page's scope picker in Chromium: a question limited to one document chosen from the
library reads only that document's passages; the choice kept as a collection limits the next
question, after a reload, by the collection's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import LiveServer
from tests.helpers.corpus import GOLDEN_DEV
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)


def _sse_sources(text: str) -> list[dict[str, Any]]:
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        if fields["event"] == "sources":
            return list(json.loads(fields["data"])["sources"])
    raise AssertionError("no sources event")


def _ask(page: Any, question: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ask through the page: the chat request's body and the sources the server streamed."""
    page.fill("#question", question)
    with page.expect_response("**/api/chat") as answered:
        page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    response = answered.value
    assert response.status == 200, response.text()
    assert page.get_attribute("#answer", "data-state") in ("done", "refused")
    return json.loads(response.request.post_data or "{}"), _sse_sources(response.text())


def test_pick_a_document_then_keep_it_as_a_collection(
    page: Any, live_server: LiveServer, seed_db: Path
) -> None:
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    question = golden["questions"][0]
    store = SQLiteStore(seed_db)
    try:
        documents = store.list_documents()
    finally:
        store.close()
    assert len(documents) >= 2
    # a document other than the one the question is about: unscoped, it would not be the only one
    evidence = {e["doc"] for e in question["evidence"]}
    chosen = next(d for d in documents if Path(d.path).stem not in evidence)

    page.goto(live_server.url)
    page.wait_for_selector("#scope-picker[data-ready=true]")
    assert page.inner_text("#scope-summary") == "All documents"
    _, unscoped = _ask(page, question["question"])
    assert {s["doc_id"] for s in unscoped} != {chosen.id}  # the scope below changes something

    page.click("#scope-picker summary")
    page.check(f"#scope-documents input[value='{chosen.id}']")
    assert page.inner_text("#scope-summary") == "Only: 1 document"
    body, sources = _ask(page, question["question"])
    assert body["documents"] == [chosen.id] and "collection" not in body
    assert sources and {s["doc_id"] for s in sources} == {chosen.id}
    titles = page.locator("#sources .source-title").all_inner_texts()
    assert all(t == chosen.title for t in titles), titles

    page.fill("#scope-save-name", "picked")
    page.click("#scope-save")
    page.wait_for_function("() => document.querySelector('#scope-collection').value === 'picked'")
    assert "Saved" in page.inner_text("#scope-save-status")
    try:
        page.reload()
        page.wait_for_selector("#scope-picker[data-ready=true]")
        page.click("#scope-picker summary")
        page.select_option("#scope-collection", "picked")
        assert page.inner_text("#scope-summary") == "Only: collection “picked”"
        body, sources = _ask(page, question["question"])
        # (the reloaded page keeps its saved thread, which the question follows)
        asked = {k: v for k, v in body.items() if k != "thread"}
        assert asked == {"question": question["question"], "collection": "picked"}
        assert sources and {s["doc_id"] for s in sources} == {chosen.id}
    finally:
        deleted = page.request.delete(f"{live_server.url}/api/collections/picked")
        assert deleted.status == 200
