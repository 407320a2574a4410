"""Saved threads on the chat page in Chromium, over a copy of the seed index (the tests delete a
document): a follow-up is sent with its thread (the server resolves it against the stored turns)
and shows "Searched for: ..."; a reload reopens the thread, its turn and the opened highlight at
the same place; a citation of a document deleted since shows that state and opens nothing;
threads are searched, renamed and deleted from the list."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import READ_BOXES, WAIT_READY, LiveServer
from tests.helpers.indexes import use_copy
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)
FIRST = "How does RAPTOR segment the retrieval corpus before building its tree?"
FOLLOW_UP = "What are they embedded with?"
OTHER = "Which CSF 2.0 subcategory covers risk appetite and risk tolerance statements?"


@pytest.fixture(scope="module")
def own_db(seed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return use_copy(seed_db, tmp_path_factory.mktemp("threads-browser") / "seed.sqlite")


@pytest.fixture(scope="module")
def server(own_db: Path) -> Iterator[LiveServer]:
    with LiveServer(own_db) as live:
        yield live


def _ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=90_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")


def _thread_turns(page: Any, count: int) -> None:
    page.wait_for_function(
        f"() => document.querySelectorAll('#thread-turns li').length === {count}"
    )


def test_a_follow_up_is_sent_with_its_thread_and_a_reload_keeps_the_highlight(
    page: Any, server: LiveServer
) -> None:
    bodies: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            bodies.append(json.loads(r.post_data or "{}")) if r.url.endswith("/api/chat") else None
        ),
    )
    page.goto(server.url)
    _ask(page, FIRST)
    _thread_turns(page, 1)
    assert "thread" not in bodies[0]  # the first question starts a thread
    assert page.is_hidden("#searched-for")
    thread = page.evaluate("() => new URLSearchParams(location.search).get('thread')")
    assert thread and len(thread) == 32

    _ask(page, FOLLOW_UP)
    assert bodies[1]["thread"] == thread and bodies[1]["question"] == FOLLOW_UP
    searched = page.inner_text("#searched-for")
    assert searched.startswith("Searched for: ") and "raptor" in searched.casefold(), searched
    _thread_turns(page, 2)
    assert page.locator("#thread-list .thread").count() == 1

    opened = page.locator("#sources .source-open:not([disabled])").first
    n = opened.get_attribute("data-n")
    opened.click()
    page.wait_for_function(WAIT_READY)
    before = page.evaluate(READ_BOXES)
    assert [b for b in before["boxes"] if b["kind"] == "strong"], before
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('cite') === '{n}'")

    page.reload()
    page.wait_for_function(WAIT_READY, timeout=60_000)
    after = page.evaluate(READ_BOXES)
    assert after["page"] == before["page"]
    assert [(b["kind"], b["line"]) for b in after["boxes"]] == [
        (b["kind"], b["line"]) for b in before["boxes"]
    ]
    for a, b in zip(after["boxes"], before["boxes"], strict=True):
        assert abs(a["left"] - b["left"]) < 1 and abs(a["top"] - b["top"]) < 1, (a, b)
    _thread_turns(page, 2)
    assert page.inner_text("#searched-for") == searched  # the shown turn is the follow-up
    assert page.get_attribute("#answer", "data-state") == "done"


def test_a_deleted_documents_citation_shows_its_state_and_opens_nothing(
    page: Any, server: LiveServer, own_db: Path
) -> None:
    page.goto(server.url)
    _ask(page, OTHER)
    _thread_turns(page, 1)
    cite = page.locator("#answer .cite[data-doc]").first
    doc = cite.get_attribute("data-doc")
    assert doc and cite.get_attribute("data-state") in ("supported", "quote_only")
    store = SQLiteStore(own_db)
    try:
        assert store.delete_document(doc) is not None
    finally:
        store.close()

    page.reload()
    page.wait_for_function(ANSWERED, timeout=60_000)
    stale = page.locator(f"#answer .cite[data-doc='{doc}']")
    assert stale.count() >= 1
    assert {stale.nth(i).get_attribute("data-state") for i in range(stale.count())} == {"deleted"}
    first = stale.first
    assert "document deleted" in (first.get_attribute("aria-label") or "")
    first.click()
    preview = page.locator(f"#{first.get_attribute('aria-controls')}")
    assert "deleted" in preview.inner_text()
    assert preview.locator(".preview-open").count() == 0  # no highlight on what is gone
    sources = page.locator("#sources .source-open[disabled]")
    assert sources.count() >= 1
    assert page.locator("#viewer").is_hidden()


def test_threads_are_searched_renamed_and_deleted_from_the_list(
    page: Any, server: LiveServer
) -> None:
    page.goto(server.url)
    page.wait_for_function("() => document.querySelectorAll('#thread-list .thread').length >= 2")
    titles = page.locator("#thread-list .thread-open").all_inner_texts()
    assert titles[0] == OTHER and FIRST in titles  # newest first

    page.fill("#thread-search", "embedded")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#thread-list .thread-open')]"
        f".map((b) => b.textContent).join('|') === {json.dumps(FIRST)}"
    )
    page.fill("#thread-search", "")
    page.wait_for_function("() => document.querySelectorAll('#thread-list .thread').length >= 2")

    # by keyboard: from the search box, Tab reaches the newest thread, its Rename, its Delete
    page.focus("#thread-search")
    reached = []
    for _ in range(3):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.className"))
    assert reached == ["thread-open", "thread-rename", "thread-delete"], reached
    page.keyboard.press("Shift+Tab")  # back on Rename

    page.once("dialog", lambda dialog: dialog.accept("   "))
    page.keyboard.press("Enter")
    page.wait_for_selector("#thread-note[data-kind=error]")
    assert page.inner_text("#thread-note") == "Not renamed: a title cannot be empty."
    assert page.locator("#thread-list .thread-open").first.inner_text() == OTHER

    page.once("dialog", lambda dialog: dialog.accept("Risk appetite"))
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#thread-list .thread-open').textContent === 'Risk appetite'"
    )
    assert page.inner_text("#thread-note") == "Renamed to “Risk appetite”."
    # the list was drawn anew: the focus is back on the same thread's Rename
    focused = "() => [document.activeElement.className, document.activeElement.textContent]"
    assert page.evaluate(focused) == ["thread-rename", "Rename"]
    count = page.locator("#thread-list .thread").count()
    page.keyboard.press("Tab")  # its Delete
    page.once("dialog", lambda dialog: dialog.accept())
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.querySelectorAll('#thread-list .thread').length === {count - 1}"
    )
    assert "Risk appetite" not in page.locator("#thread-list").inner_text()
    assert page.inner_text("#thread-note") == "Deleted “Risk appetite”."
    # the keyboard is left on the next thread, not on the page's body
    assert page.evaluate("() => document.activeElement.className") == "thread-open"


LONG = 60


@pytest.fixture()
def long_db(seed_db: Path, tmp_path: Path) -> Path:
    """A copy of the seed index with LONG saved threads of the local user, a minute apart."""
    db = use_copy(seed_db, tmp_path / "seed.sqlite")
    store = SQLiteStore(db)
    try:
        for i in range(LONG):
            thread_id = f"{i:032x}"
            store.add_thread(thread_id, None, f"Saved question q{i:02d}")
            answer = {"text": f"answer {i}", "refused": False, "sources": [], "citations": []}
            store.add_turn(thread_id, f"Saved question q{i:02d}", answer)
    finally:
        store.close()
    with sqlite3.connect(db) as conn:  # times a minute apart: the order is certain
        for i in range(LONG):
            stamp = f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00+00:00"
            conn.execute(
                "UPDATE threads SET created_at = ?, updated_at = ? WHERE id = ?",
                (stamp, stamp, f"{i:032x}"),
            )
    return db


def test_a_long_thread_list_scrolls_newest_first_and_is_searched(page: Any, long_db: Path) -> None:
    with LiveServer(long_db) as live:
        page.goto(live.url)
        page.wait_for_function(
            f"() => document.querySelectorAll('#thread-list .thread').length === {LONG}"
        )
        titles = page.locator("#thread-list .thread-open").all_inner_texts()
        assert titles == [f"Saved question q{i:02d}" for i in reversed(range(LONG))]  # newest first
        box = page.evaluate(
            """() => { const l = document.querySelector('#thread-list');
            const turns = document.querySelector('#thread-turns').getBoundingClientRect();
            return { client: l.clientHeight, scroll: l.scrollHeight, turns: turns.top,
                     overflow: getComputedStyle(l).overflowY, viewport: innerHeight }; }"""
        )
        # the list scrolls inside its box; what follows it stays on the first screen
        assert box["overflow"] == "auto" and box["scroll"] > box["client"], box
        assert box["client"] <= 0.5 * box["viewport"] and box["turns"] < box["viewport"], box

        # the keyboard scrolls it: the oldest thread, focused, is shown
        page.locator("#thread-list .thread-open").last.focus()
        assert page.evaluate(
            """() => { const l = document.querySelector('#thread-list').getBoundingClientRect();
            const b = document.activeElement.getBoundingClientRect();
            return b.top >= l.top && b.bottom <= l.bottom + 1; }"""
        )
        # Enter in the search box searches at once; what it finds is still newest first
        page.fill("#thread-search", "Q07")
        page.press("#thread-search", "Enter")
        page.wait_for_function(
            "() => document.querySelectorAll('#thread-list .thread').length === 1"
        )
        assert page.locator("#thread-list .thread-open").all_inner_texts() == ["Saved question q07"]
        page.fill("#thread-search", "zebra")
        page.press("#thread-search", "Enter")
        page.wait_for_selector("#thread-list .thread-none >> text=No thread has these words.")
        page.fill("#thread-search", "")
        page.press("#thread-search", "Enter")
        page.wait_for_function(
            f"() => document.querySelectorAll('#thread-list .thread').length === {LONG}"
        )
        page.locator("#thread-list .thread-open").nth(LONG - 1).click()
        page.wait_for_function("() => document.querySelectorAll('#thread-turns li').length === 1")
        assert page.inner_text("#thread-note") == "Thread: Saved question q00"
