"""Where a claim departs from its page, in the browser (issue 24 item 5): a scripted model
(tests/helpers/conflicts.py) answers with a real seed sentence changed, one number and one
direction; the chat page shows the conflict under the citation and the viewer marks the page's
side, the glyph rects of those words, in a style distinct from the supporting sentence, from
the citation's Open button and from its new-tab link alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import indexes
from tests.helpers.browser import (
    ARTIFACTS,
    READ_BOXES,
    WAIT_READY,
    LiveServer,
    ink_shares,
    max_error,
    to_viewport,
)
from tests.helpers.conflicts import DEPARTING, DepartingClaim, departing_model
from tests.helpers.transcripts import scripted_server
from truthbase.config import LLMSettings, Settings
from truthbase.geometry import span_line_rects
from truthbase.model import Unit
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)
#: Page pixels between a drawn box and the glyph boxes it is drawn from (test_placement's).
TOLERANCE_PX = 0.05
MIN_INK = 0.02  # a box over words has at least this share of dark pixels
STYLE = """(kind) => {
  const s = getComputedStyle(document.querySelector(`.hl-${kind}`));
  return {background: s.backgroundColor, outline: s.outlineStyle};
}"""


@pytest.fixture(scope="module")
def conflict_server(
    seed_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, Path]]:
    """The server over a copy of the seed index, answering with the scripted model, and the
    copy's path."""
    db = indexes.use_copy(seed_db, tmp_path_factory.mktemp("conflict") / "conflict.sqlite")
    with scripted_server() as model:
        model.responder = departing_model
        settings = Settings(db=db, llm=LLMSettings(base_url=model.base_url, model="scripted"))
        with LiveServer(db, settings) as server:
            yield server, db


def _unit(db: Path, doc: str, index: int) -> Unit:
    store = SQLiteStore(db)
    try:
        unit = store.unit(doc, index)
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None
    return unit


def _check_marks(page: Any, unit: Unit, cited: tuple[int, int], case: DepartingClaim) -> None:
    """The viewer shows the cited sentence and, on it, the page's side of the conflict: drawn
    where its glyphs are, over ink, in a style of its own."""
    page.wait_for_function(WAIT_READY)
    drawn = page.evaluate(READ_BOXES)
    assert drawn["page"] == unit.index + 1 and not drawn["badge"]
    at = unit.text.index(case.page_says, cited[0])
    assert at + len(case.page_says) <= cited[1]
    assert unit.geometry is not None
    expected = [
        to_viewport(r, unit.geometry, 1.0)
        for r in span_line_rects(unit.text, unit.boxes, at, at + len(case.page_says))
    ]
    marked = [b for b in drawn["boxes"] if b["kind"] == "conflict"]
    assert max_error(marked, expected) <= TOLERANCE_PX
    strong = [b for b in drawn["boxes"] if b["kind"] == "strong"]
    assert any(
        s["left"] <= m["left"] and m["right"] <= s["right"] + 0.5 for s in strong for m in marked
    )
    assert all(share >= MIN_INK for share in ink_shares(page, "conflict"))
    mark, sentence = page.evaluate(STYLE, "conflict"), page.evaluate(STYLE, "strong")
    assert mark["outline"] == "dashed" and sentence["outline"] != "dashed"
    assert mark["background"] != sentence["background"]
    assert page.locator(".legend-conflict").is_visible()


@pytest.mark.parametrize("case", DEPARTING, ids=["number", "direction"])
def test_a_conflict_is_shown_under_the_citation_and_marked_on_the_page(
    page: Any, conflict_server: tuple[LiveServer, Path], case: DepartingClaim
) -> None:
    server, db = conflict_server
    page.goto(server.url)
    page.fill("#question", case.question)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=60_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
    cite = page.locator("#answer .cite[data-state=quote_only]").first
    cite.click()
    preview = page.locator(f"#{cite.get_attribute('aria-controls')}")
    note = preview.locator(".preview-conflict")
    assert note.get_attribute("data-code") == case.code
    text = " ".join(note.inner_text().split())
    assert f"the answer says {case.claim_says} · the page says {case.page_says}" in text, text
    assert preview.locator(".conflict-mark").inner_text().startswith(case.page_says)
    unit = _unit(db, str(cite.get_attribute("data-doc")), int(cite.get_attribute("data-unit") or 0))
    cited = (int(cite.get_attribute("data-start") or 0), int(cite.get_attribute("data-end") or 0))
    link = preview.locator(".preview-link").get_attribute("href") or ""
    assert "conflict_start=" in link and "conflict_end=" in link
    preview.locator(".preview-open").click()
    _check_marks(page, unit, cited, case)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"conflict-{case.code}.png"))
    # The citation's new-tab link opens the viewer alone with the same marks.
    page.goto(server.url + link)
    _check_marks(page, unit, cited, case)
