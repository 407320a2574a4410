"""Feedback in Chromium: ann signs in, asks, gives the answer a thumbs up and reports its first
citation as the wrong passage with the buttons under the answer; the admin's page then lists
both reports, hers, with the question, and counts her saved threads and turns (never their
contents)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import LiveServer
from tests.helpers.corpus import ROBUSTNESS
from truthbase.config import Settings
from truthbase.embed import Embedder

pytestmark = [pytest.mark.corpus]

PASSWORD = "correct horse battery"
QUESTION = "Who appeared on behalf of the Petitioner?"
ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.getElementById('answer').dataset.state)"
)


@pytest.fixture()
def feedback_server(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    from truthbase import accounts
    from truthbase.ingest import IngestOptions, ingest_file
    from truthbase.store import SQLiteStore

    db = tmp_path / "feedback.sqlite"
    store = SQLiteStore(db)
    try:
        accounts.add_user(store, "ann", PASSWORD)
        accounts.add_user(store, "root", PASSWORD, admin=True)
        transcript = ROBUSTNESS / "pdfplumber-scotus-transcript-p1.pdf"
        outcome = ingest_file(
            transcript, store, embedder, IngestOptions.from_settings(Settings(db=db))
        )
        assert outcome.status == "ingested", outcome
    finally:
        store.close()
    with LiveServer(db) as server:
        yield server


def _signed_in(browser: Any, server: LiveServer, name: str, errors: list[str]) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(f"{name}: {exc}"))
    page.goto(f"{server.url}/")
    assert "/login?next=" in page.url
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#login-button")
    page.wait_for_url(f"{server.url}/")
    return page


def test_thumbs_up_and_a_wrong_passage_reach_the_admin(
    browser: Any, feedback_server: LiveServer
) -> None:
    errors: list[str] = []
    ann = _signed_in(browser, feedback_server, "ann", errors)
    ann.select_option("#mode", "extractive")
    ann.fill("#question", QUESTION)
    ann.press("#question", "Enter")
    ann.wait_for_function(ANSWERED, timeout=60_000)
    assert ann.get_attribute("#answer", "data-state") == "done", ann.inner_text("#answer")

    bar = ann.locator("section.feedback")
    first_answer = bar.get_attribute("data-answer-id")
    up = bar.locator("button[data-kind=up]")
    up.click()
    ann.wait_for_selector("section.feedback .feedback-status >> text=your feedback is saved")
    assert up.get_attribute("aria-pressed") == "true"
    assert bar.locator("button[data-kind=down]").get_attribute("aria-pressed") == "false"

    first = bar.locator(".feedback-citation").first
    n = first.get_attribute("data-n")
    ann.fill("section.feedback .feedback-comment", "the wrong lawyer")
    ann.evaluate("() => { document.querySelector('.feedback-status').textContent = ''; }")
    wrong = first.locator("button[data-kind=wrong_passage]")
    wrong.click()
    ann.wait_for_selector("section.feedback .feedback-status >> text=your feedback is saved")
    assert wrong.get_attribute("aria-pressed") == "true"

    # a new question's answer gets its own bar, in place of the old answer's
    ann.fill("#question", "When was the argument?")
    ann.press("#question", "Enter")
    ann.wait_for_function(ANSWERED, timeout=60_000)
    ann.wait_for_function(
        f"() => document.querySelectorAll('section.feedback').length === 1 && "
        f"document.querySelector('section.feedback').dataset.answerId !== '{first_answer}'"
    )

    root = _signed_in(browser, feedback_server, "root", errors)
    root.goto(f"{feedback_server.url}/admin")
    root.wait_for_selector("#feedback-status >> text=newest first")
    rows = root.locator("#feedback-rows tr")
    assert rows.count() == 2
    cells = [[c.strip() for c in rows.nth(i).locator("td").all_inner_texts()] for i in range(2)]
    newest, oldest = cells
    assert newest[1] == oldest[1] == "ann"
    assert newest[2] == oldest[2] == QUESTION
    assert newest[4:] == [f"[{n}]", "wrong passage", "the wrong lawyer"]
    assert oldest[4:6] == ["answer", "👍 up"]

    # the admin sees how many threads and turns ann keeps, never what they hold
    root.wait_for_selector("#threads-status >> text=counts only")
    counted = root.locator("#thread-rows tr")
    by_user = {
        row[0]: row[1:]
        for row in (
            [c.strip() for c in counted.nth(i).locator("td").all_inner_texts()]
            for i in range(counted.count())
        )
    }
    assert "ann" in by_user, by_user
    threads, turns = (int(v) for v in by_user["ann"])
    assert threads >= 1 and turns == 2, by_user  # two questions asked
    assert QUESTION not in root.inner_text("table.thread-counts")
    assert not errors, errors
