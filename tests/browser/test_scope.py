"""The chat page's scope picker in Chromium: a question limited to one document chosen from the
library reads only that document's passages; the choice kept as a collection limits the next
question, after a reload, by the collection's name. Collections are renamed and deleted (after a
confirmation) from the picker, by keyboard, and every refusal (an empty name, a name in use, a
slash) is a sentence in the picker's live line."""

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


def _collections(page: Any, server: LiveServer) -> dict[str, list[str]]:
    listed = page.request.get(f"{server.url}/api/collections").json()["collections"]
    return {c["name"]: c["documents"] for c in listed}


def _said(page: Any, text: str, kind: str) -> None:
    """The picker's live line says ``text`` (a sentence), marked as ``kind``."""
    page.wait_for_function(
        "([text, kind]) => { const s = document.querySelector('#scope-save-status');"
        " return s.textContent === text && s.dataset.kind === kind; }",
        arg=[text, kind],
    )


def test_collections_are_renamed_and_deleted_from_the_picker(
    page: Any, live_server: LiveServer, seed_db: Path
) -> None:
    store = SQLiteStore(seed_db)
    try:
        documents = store.list_documents()
    finally:
        store.close()
    chats: list[str] = []
    page.on("request", lambda r: chats.append(r.url) if r.url.endswith("/api/chat") else None)
    page.goto(live_server.url)
    page.wait_for_selector("#scope-picker[data-ready=true]")
    page.click("#scope-picker summary")
    assert page.get_attribute("#scope-save-status", "aria-live") == "polite"
    assert page.is_hidden("#scope-manage")  # nothing to rename before a collection is chosen

    try:
        page.click("#scope-save")
        _said(page, "Not saved: Give the collection a name.", "error")
        page.fill("#scope-save-name", "first")
        page.click("#scope-save")
        _said(page, "Not saved: Choose at least one document to keep.", "error")
        first, second = documents[0], documents[1]
        page.check(f"#scope-documents input[value='{first.id}']")
        page.press("#scope-save-name", "Enter")  # Enter keeps the collection; it asks nothing
        _said(page, "Saved “first”.", "done")
        page.check(f"#scope-documents input[value='{second.id}']")
        page.fill("#scope-save-name", "second")
        page.click("#scope-save")
        _said(page, "Saved “second”.", "done")
        assert page.input_value("#scope-collection") == "second"
        assert page.is_visible("#scope-manage")
        assert page.input_value("#scope-rename-name") == "second"
        # the keyboard goes from the chosen collection to its new name, Rename and Delete
        page.focus("#scope-collection")
        order = []
        for _ in range(3):
            page.keyboard.press("Tab")
            order.append(page.evaluate("() => document.activeElement.id"))
        assert order == ["scope-rename-name", "scope-rename", "scope-delete"], order

        # refusals, each a sentence: a name in use, an empty one, a slash
        page.fill("#scope-rename-name", "first")
        page.press("#scope-rename-name", "Enter")
        _said(page, "Not renamed: A collection named 'first' exists already.", "error")
        page.fill("#scope-rename-name", "  ")
        page.click("#scope-rename")
        _said(page, "Not renamed: Give the collection a new name.", "error")
        page.fill("#scope-rename-name", "a/b")
        page.click("#scope-rename")
        page.wait_for_function(
            "() => document.querySelector('#scope-save-status').textContent"
            ".startsWith('Not renamed: Collection name')"
        )
        assert set(_collections(page, live_server)) >= {"first", "second"}

        page.fill("#scope-rename-name", "kept")
        page.click("#scope-rename")
        _said(page, "Renamed “second” to “kept”.", "done")
        assert page.input_value("#scope-collection") == "kept"
        kept = _collections(page, live_server)
        assert "second" not in kept and kept["kept"] == [second.id]
        assert page.inner_text("#scope-summary") == "Only: collection “kept”"

        # Delete asks first: dismissed, nothing goes
        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click("#scope-delete")
        _said(page, "Nothing deleted.", "done")
        assert "kept" in _collections(page, live_server)
        messages: list[str] = []
        page.once("dialog", lambda dialog: (messages.append(dialog.message), dialog.accept()))
        page.focus("#scope-delete")
        page.keyboard.press("Enter")
        _said(page, "Deleted “kept”.", "done")
        assert messages == ["Delete the collection “kept”? Its documents stay in the library."]
        assert "kept" not in _collections(page, live_server)
        assert page.input_value("#scope-collection") == ""
        assert page.is_hidden("#scope-manage")
        assert page.evaluate("() => document.activeElement.id") == "scope-collection"
        assert page.inner_text("#scope-summary") == "All documents"
        assert chats == []  # no key press above asked a question
    finally:
        for name in ("first", "second", "kept"):
            page.request.delete(f"{live_server.url}/api/collections/{name}")
