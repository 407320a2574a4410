"""Feedback in Chromium: ann signs in, asks, gives the answer a thumbs up and reports its first
citation as the wrong passage with the buttons under the answer; the admin's page then lists
both reports, hers, with the question, and counts her saved threads and turns (never their
contents). A reopened saved thread shows the same bar with what ann gave pressed, takes a
changed vote, and a thread shared with another user shows that user no bar (its answers are not
theirs to report on)."""

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


def _asked(page: Any) -> Any:
    """``page`` once it has asked QUESTION in extractive mode and shows the finished answer."""
    page.select_option("#mode", "extractive")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
    return page


def test_thumbs_up_and_a_wrong_passage_reach_the_admin(
    browser: Any, feedback_server: LiveServer
) -> None:
    errors: list[str] = []
    ann = _asked(_signed_in(browser, feedback_server, "ann", errors))

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


def _pressed(page: Any) -> dict[str, list[str]]:
    """Per row of the bar ("answer" or the citation's [n]), the kinds shown pressed."""
    return dict(
        page.evaluate(
            """() => [...document.querySelectorAll(
                'section.feedback .feedback-votes, section.feedback .feedback-citation',
            )].map((row) => [
                row.dataset.n ?? 'answer',
                [...row.querySelectorAll('button[aria-pressed=true]')].map((b) => b.dataset.kind),
            ])"""
        )
    )


def test_a_reopened_thread_shows_the_feedback_given_and_takes_more(
    browser: Any, feedback_server: LiveServer
) -> None:
    errors: list[str] = []
    ann = _asked(_signed_in(browser, feedback_server, "ann", errors))
    ann.wait_for_function("() => document.querySelectorAll('#thread-turns li').length === 1")
    bar = ann.locator("section.feedback")
    answer_id = bar.get_attribute("data-answer-id")
    n = bar.locator(".feedback-citation").first.get_attribute("data-n")
    bar.locator("button[data-kind=up]").click()
    ann.wait_for_selector("section.feedback .feedback-status >> text=your feedback is saved")
    ann.evaluate("() => { document.querySelector('.feedback-status').textContent = ''; }")
    bar.locator(f".feedback-citation[data-n='{n}'] button[data-kind=wrong_passage]").click()
    ann.wait_for_selector("section.feedback .feedback-status >> text=your feedback is saved")
    fresh = _pressed(ann)
    assert fresh["answer"] == ["up"] and fresh[n] == ["wrong_passage"], fresh
    citations = sorted(k for k in fresh if k != "answer")

    # the reload reopens the saved thread: the same bar, for the same answer, as given
    ann.reload()
    ann.wait_for_function(ANSWERED, timeout=60_000)
    ann.wait_for_selector("section.feedback[data-given='2']")
    assert bar.get_attribute("data-answer-id") == answer_id
    assert _pressed(ann) == fresh
    assert sorted(k for k in _pressed(ann) if k != "answer") == citations  # every citation
    assert "earlier feedback" in ann.inner_text("section.feedback .feedback-status")

    # a changed vote on the reopened answer is stored (and replaces the thumbs up)
    ann.fill("section.feedback .feedback-comment", "on second thought")
    bar.locator("button[data-kind=down]").click()
    ann.wait_for_selector("section.feedback .feedback-status >> text=your feedback is saved")
    given = ann.request.get(f"{feedback_server.url}/api/answers/{answer_id}/feedback").json()
    kinds = [(r["kind"], r["citation"], r["comment"]) for r in given["reports"]]
    assert kinds == [("down", 0, "on second thought"), ("wrong_passage", int(n), "")], kinds
    # opened again from the thread's list of questions, it shows the new vote
    ann.locator("#thread-turns .thread-turn").first.click()
    ann.wait_for_selector("section.feedback[data-given='2']")
    assert _pressed(ann) == {**fresh, "answer": ["down"]}

    # shared with the admin, the thread shows no bar there: the answer is not root's
    thread = ann.evaluate("() => new URLSearchParams(location.search).get('thread')")
    shared = ann.request.post(f"{feedback_server.url}/api/threads/{thread}/share")
    assert shared.status == 200, shared.text()
    root = _signed_in(browser, feedback_server, "root", errors)
    root.goto(f"{feedback_server.url}{shared.json()['url']}")
    root.wait_for_function(ANSWERED, timeout=60_000)
    assert root.locator("#shared-turns li").count() == 1
    assert root.locator("section.feedback").count() == 0
    assert not errors, errors
