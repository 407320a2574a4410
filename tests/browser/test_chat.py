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
from truthbase.text.matching import find_quote

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


def test_ask_and_open_the_citation_that_holds_the_golden_quote(
    page: Any, live_server: LiveServer, seed_db: Path
) -> None:
    question = _question("d001")
    (evidence,) = question["evidence"]
    _ask(page, live_server, question["question"])
    assert page.locator("#sources li").count() >= 1
    # The answer may cite more than one sentence of the page: open the marker whose span holds
    # the golden quote (the extractive answer keeps sentences within extractive.keep_ratio).
    cites = page.locator("#answer .cite[data-doc]")
    doc = cites.first.get_attribute("data-doc")
    store = SQLiteStore(seed_db)
    try:
        unit = store.unit(str(doc), evidence["page"] - 1)
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None
    spans = find_quote(evidence["quote"], unit.text)
    assert spans is not None
    first, last = spans[0][0], spans[-1][1]
    holding = [
        i
        for i in range(cites.count())
        if cites.nth(i).get_attribute("data-doc") == doc
        and int(cites.nth(i).get_attribute("data-page") or 0) == evidence["page"]
        and int(cites.nth(i).get_attribute("data-start") or 0) < last
        and first < int(cites.nth(i).get_attribute("data-end") or 0)
    ]
    assert holding, "no citation of the answer holds the golden quote"
    cite = cites.nth(holding[0])
    cited_page = int(cite.get_attribute("data-page") or 0)
    cite.click()  # the first click shows the footnote preview; its Open button opens the page
    page.locator(f"#{cite.get_attribute('aria-controls')} .preview-open").click()
    page.wait_for_function(WAIT_READY)
    drawn = page.evaluate(READ_BOXES)
    assert drawn["page"] == cited_page == evidence["page"]
    assert not drawn["badge"]
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
            said = page.inner_text("#answer").lower()
            if page.get_attribute("#answer", "data-outcome") == "weak":
                assert "may not answer this" in said
                continue
            assert "not in these documents" in said
            return
    pytest.skip("the extractive answerer answered every unanswerable question tried")


def test_keyboard_alone_opens_and_closes_a_citation(page: Any, live_server: LiveServer) -> None:
    page.goto(live_server.url)
    page.keyboard.press("Tab")  # the skip link
    stops = []
    for _ in range(4):  # then the header's page links (Chat, Library), then the question
        page.keyboard.press("Tab")
        stops.append(
            page.evaluate("document.activeElement.id || document.activeElement.textContent")
        )
        if stops[-1] == "question":
            break
    assert stops[-1] == "question", stops
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
                      ctl: a.getAttribute('aria-controls'),
                      outline: getComputedStyle(a).outlineStyle}; }"""
        )
        if "cite" in info["cls"] or "source-open" in info["cls"]:
            assert info["label"], info
            assert info["outline"] != "none", info
            # a marker by its preview (one source's [n] may mark several sentences), a source
            # by its n
            kind = info["cls"].split()[0]
            reached.add(f"{kind}:{info['ctl'] if kind == 'cite' else info['n']}")
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
    # the second question follows the first in its saved thread (tests/browser/test_threads.py)
    thread = bodies[1].pop("thread", None)
    assert isinstance(thread, str) and len(thread) == 32, bodies
    assert bodies == [{"question": question}, {"question": question, "mode": "extractive"}]
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")


def _sse(*events: tuple[str, dict[str, Any]]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def test_a_quote_only_citation_gets_no_verified_badge(page: Any, live_server: LiveServer) -> None:
    """A scripted answer: [1]'s claim follows from its quote, [2]'s does not (quote_only)."""
    source = {
        "n": 1,
        "doc_id": "x",
        "title": "Doc",
        "page": 1,
        "unit": 0,
        "start": 0,
        "end": 40,
        "text": "The Govern function is cross-cutting.",
        "rects": [],
    }
    other = {**source, "n": 2, "start": 40, "end": 80, "text": "Tiers describe rigor."}

    def citation(n: int, claim: str, state: str, reasons: list[str]) -> dict[str, Any]:
        return {
            "n": n,
            "doc_id": "x",
            "page": 1,
            "unit": 0,
            "start": 0,
            "end": 30,
            "quote": "The Govern function",
            "rects": [],
            "verified": True,
            "claim": claim,
            "support": 1.0 if state == "supported" else 0.1,
            "via": "tag",
            "state": state,
            "reasons": reasons,
        }

    text = "Govern is cross-cutting [1]. The moon is cheese [2]."
    citations = [
        citation(1, "Govern is cross-cutting", "supported", []),
        citation(2, "The moon is cheese", "quote_only", ["support 0.10 below 0.35"]),
    ]
    answer = {
        "id": None,
        "question": "q",
        "text": text,
        "refused": False,
        "answerer": "llm",
        "sources": [source, other],
        "citations": citations,
        "problems": [],
        "info": {},
        "timings": {},
    }
    body = _sse(
        ("sources", {"type": "sources", "sources": [source, other]}),
        ("token", {"type": "token", "text": text}),
        ("citations", {"type": "citations", "citations": citations, "problems": []}),
        ("done", {"type": "done", "answer": answer}),
    )
    page.route(
        "**/api/chat",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=body),
    )
    _ask(page, live_server, "What does the moon consist of?")
    first, second = page.locator("#answer .cite").all()
    assert first.get_attribute("data-state") == "supported"
    assert "cite-quote-only" not in (first.get_attribute("class") or "")
    assert "verified" in (first.get_attribute("aria-label") or "")
    assert second.get_attribute("data-state") == "quote_only"
    assert "cite-quote-only" in (second.get_attribute("class") or "")
    label = second.get_attribute("aria-label") or ""
    assert "check this passage" in label and "verified" not in label
    # The verified look is the plain .cite style: the quote_only marker does not share it.
    look = "(e) => getComputedStyle(e).backgroundColor"
    assert first.evaluate(look) != second.evaluate(look)
    second.click()
    status = page.locator(f"#{second.get_attribute('aria-controls')} .preview-status")
    assert status.inner_text().startswith("Check this passage")
    assert "Verified" not in status.inner_text()
    assert "1 verified, 1 to check" in page.inner_text("#status")


@pytest.mark.parametrize("slot", [None, "price"])
def test_a_weak_answer_lists_the_closest_passages_without_claims(
    page: Any, live_server: LiveServer, slot: str | None
) -> None:
    """A scripted weak refusal: the page says the documents may not answer, lists the passages
    the answer came closest to, and shows no claim, marker or verified badge; refused for a
    value the question asks for (a price), it says none of the passages gives one."""
    sources = [
        {
            "n": n,
            "doc_id": "x",
            "title": "Doc",
            "page": n,
            "unit": n - 1,
            "start": 0,
            "end": 30,
            "text": text,
            "rects": [],
        }
        for n, text in (
            (1, "Red-teaming is one way to test."),
            (2, "Testing, evaluation and TEVV."),
        )
    ]
    answer = {
        "id": None,
        "question": "q",
        "text": "NO_ANSWER",
        "refused": True,
        "outcome": "weak",
        "answerer": "extractive",
        "sources": sources,
        "citations": [],
        "problems": [],
        "info": {"support": 0.45, "outcome": "weak", "unfilled_slot": slot},
        "timings": {},
    }
    body = _sse(
        ("sources", {"type": "sources", "sources": sources}),
        ("token", {"type": "token", "text": "NO_ANSWER"}),
        ("citations", {"type": "citations", "citations": [], "problems": []}),
        ("done", {"type": "done", "answer": answer}),
    )
    page.route(
        "**/api/chat",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=body),
    )
    page.goto(live_server.url)
    page.fill("#question", "Which red-teaming procedure does the framework prescribe?")
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "refused"
    assert page.get_attribute("#answer", "data-outcome") == "weak"
    text = page.inner_text("#answer")
    assert "may not answer this" in text and "closest passages" in text
    assert ("None of the closest passages gives a price." in text) is (slot == "price")
    assert page.locator("#answer .cite").count() == 0
    assert "Red-teaming is one way to test." in page.inner_text("#sources")
    assert "may not answer this" in page.inner_text("#status")
