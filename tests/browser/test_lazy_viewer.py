"""The chat page loads the PDF viewer's code (pdf.js) only when an answer arrives, and a citation
still opens the viewer with its highlight after that lazy load."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.browser import WAIT_READY, LiveServer
from tests.helpers.corpus import GOLDEN_DEV

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)


def test_pdfjs_loads_after_the_question_and_the_citation_is_highlighted(
    page: Any, live_server: LiveServer
) -> None:
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    question = next(q for q in golden["questions"] if q["id"] == "d001")
    (evidence,) = question["evidence"]
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(live_server.url)
    page.wait_for_load_state("networkidle")
    assert not [u for u in requested if "/pdfjs/" in u or u.endswith("/js/viewer.js")], requested
    assert page.get_attribute("#viewer", "hidden") is not None

    page.fill("#question", question["question"])
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
    # The answer's sources prefetch the viewer while it streams.
    assert page.evaluate("() => window.truthbaseViewer === undefined")  # built on first open
    assert any(u.endswith("/pdfjs/build/pdf.mjs") for u in requested), requested

    cite = page.locator("#answer .cite").first
    cited_page = int(cite.get_attribute("data-page") or 0)
    cite.click()
    page.locator(f"#{cite.get_attribute('aria-controls')} .preview-open").click()
    page.wait_for_function(WAIT_READY)
    assert page.get_attribute("#viewer", "data-highlight-state") == "drawn"
    assert int(page.get_attribute("#viewer .tb-page", "data-page") or 0) == cited_page
    assert cited_page == evidence["page"]
    assert page.locator("#viewer .hl-strong").count() >= 1
    assert page.locator("#viewer .hl-light").count() >= 1
    assert page.evaluate("() => document.activeElement?.id") == "viewer-title"
