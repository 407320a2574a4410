"""The chat page end to end: ask a dev.json question, follow a citation, with the mouse and with
the keyboard alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import ARTIFACTS, READ_BOXES, WAIT_READY, LiveServer, to_viewport
from tests.helpers.corpus import GOLDEN_DEV
from truthbase.geometry import span_line_rects
from truthbase.store import SQLiteStore
from truthbase.textmatch import find_quote

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)


def _question(qid: str) -> dict[str, Any]:
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    return next(q for q in golden["questions"] if q["id"] == qid)


def _ask(page: Any, server: LiveServer, question: str) -> None:
    page.goto(server.url)
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")


def _intersects(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_ask_and_open_the_first_citation(page: Any, live_server: LiveServer, seed_db: Path) -> None:
    question = _question("d001")
    (evidence,) = question["evidence"]
    _ask(page, live_server, question["question"])
    assert page.locator("#sources li").count() >= 1
    cite = page.locator("#answer .cite").first
    cited_page = int(cite.get_attribute("data-page") or 0)
    doc = cite.get_attribute("data-doc")
    cite.click()  # the first click shows the footnote preview; its Open button opens the page
    page.locator(f"#{cite.get_attribute('aria-controls')} .preview-open").click()
    page.wait_for_function(WAIT_READY)
    drawn = page.evaluate(READ_BOXES)
    assert drawn["page"] == cited_page == evidence["page"]
    assert not drawn["badge"]
    store = SQLiteStore(seed_db)
    try:
        unit = store.unit(str(doc), cited_page - 1)
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None
    spans = find_quote(evidence["quote"], unit.text)
    assert spans is not None
    golden = [
        to_viewport(r, unit.geometry, 1.0)
        for r in span_line_rects(unit.text, unit.boxes, spans[0][0], spans[-1][1])
    ]
    strong = [
        (b["left"], b["top"], b["right"], b["bottom"])
        for b in drawn["boxes"]
        if b["kind"] == "strong"
    ]
    assert any(b["kind"] == "light" for b in drawn["boxes"])
    assert any(_intersects(s, g) for s in strong for g in golden)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chat-citation.png"))


def test_refusal_reads_not_in_these_documents(page: Any, live_server: LiveServer) -> None:
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    unanswerable = [q for q in golden["questions"] if not q["answerable"]]
    assert unanswerable
    page.goto(live_server.url)
    for q in unanswerable[:3]:
        page.fill("#question", q["question"])
        page.press("#question", "Enter")
        page.wait_for_function(ANSWERED, timeout=60_000)
        if page.get_attribute("#answer", "data-state") == "refused":
            assert "not in these documents" in page.inner_text("#answer").lower()
            return
    pytest.skip("the extractive answerer answered every unanswerable question tried")


def test_keyboard_alone_opens_and_closes_a_citation(page: Any, live_server: LiveServer) -> None:
    page.goto(live_server.url)
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "question"
    page.keyboard.type(_question("d001")["question"])
    page.keyboard.press("Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "done"

    # Tab reaches every citation and every source, each with a label and a visible focus ring.
    wanted = page.evaluate("document.querySelectorAll('.cite, .source-open').length")
    reached: set[str] = set()
    for _ in range(wanted + 20):
        page.keyboard.press("Tab")
        info = page.evaluate(
            """() => { const a = document.activeElement;
              return {cls: a.className, n: a.dataset.n, label: a.getAttribute('aria-label'),
                      outline: getComputedStyle(a).outlineStyle}; }"""
        )
        if "cite" in info["cls"] or "source-open" in info["cls"]:
            assert info["label"], info
            assert info["outline"] != "none", info
            reached.add(f"{info['cls'].split()[0]}:{info['n']}")
    assert len(reached) == wanted, (reached, wanted)

    # Back to the first citation with the keyboard, open it with Enter, close with Escape.
    first = "() => document.activeElement === document.querySelector('#answer .cite')"
    for _ in range(wanted + 20):
        if page.evaluate(first):
            break
        page.keyboard.press("Shift+Tab")
    assert page.evaluate(first)
    page.keyboard.press("Enter")  # shows the footnote preview
    assert page.get_attribute("#answer .cite >> nth=0", "aria-expanded") == "true"
    page.keyboard.press("Tab")  # to its Open button
    assert "preview-open" in page.evaluate("document.activeElement.className")
    page.keyboard.press("Enter")
    page.wait_for_function(WAIT_READY)
    assert page.locator(".hl-strong").count() >= 1
    assert page.evaluate("document.activeElement.id") == "viewer-title"
    assert page.get_attribute("#answer .cite >> nth=0", "aria-expanded") == "true"
    page.keyboard.press("Escape")
    assert page.locator("#viewer").is_hidden()
    assert "cite" in page.evaluate("document.activeElement.className").split()


def test_mode_selector_posts_mode_only_when_not_auto(page: Any, live_server: LiveServer) -> None:
    bodies: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            bodies.append(json.loads(r.post_data or "{}")) if r.url.endswith("/api/chat") else None
        ),
    )
    question = _question("d001")["question"]
    page.goto(live_server.url)
    assert page.input_value("#mode") == "auto"
    assert page.locator("label[for=mode]").inner_text()
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    page.select_option("#mode", "extractive")
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert bodies == [{"question": question}, {"question": question, "mode": "extractive"}]
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
