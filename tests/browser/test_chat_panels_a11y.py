"""The chat page's panels checked by axe-core (WCAG 2.1 A and AA rules) in Chromium, in the
states the keyboard reaches: the scope picker open with a collection chosen (its rename and
delete shown) and a refusal in its live line; the thread list with a refused rename said in its
note; the feedback bar of a reopened saved answer. axe-core is the copy npm installs beside
pdf.js (a dependency of Lighthouse); without it the test is skipped with that reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import LiveServer, checked_page
from tests.helpers.indexes import use_copy
from truthbase.server.app import default_web_dir

pytestmark = pytest.mark.slow

AXE = default_web_dir() / "node_modules" / "axe-core" / "axe.min.js"
ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)
QUESTION = "How does RAPTOR segment the retrieval corpus before building its tree?"
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture(scope="module")
def server(seed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = use_copy(seed_db, tmp_path_factory.mktemp("a11y-browser") / "seed.sqlite")
    with LiveServer(db) as live:
        yield live


def _violations(page: Any, *selectors: str) -> tuple[list[str], list[str]]:
    """axe's violations inside ``selectors`` (each rule's id, impact and the nodes it found)
    and the rules that passed there (so that a run that checked nothing shows)."""
    found = page.evaluate(
        """async ([selectors, rules]) => {
            const result = await axe.run(
                { include: selectors.map((s) => [s]) },
                { runOnly: { type: 'tag', values: rules }, resultTypes: ['violations'] },
            );
            return [
                result.violations.map((v) =>
                    `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
                result.passes.map((p) => p.id),
            ];
        }""",
        [list(selectors), RULES],
    )
    return list(found[0]), list(found[1])


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    """A page whose Content-Security-Policy lets the test add axe-core's script (the app's own
    scripts run as they would under it)."""
    with checked_page(browser, bypass_csp=True) as pg:
        yield pg


def test_the_added_controls_pass_axe_in_the_states_the_keyboard_reaches(
    page: Any, server: LiveServer
) -> None:
    if not AXE.is_file():
        pytest.skip(f"{AXE} is missing: run scripts/install-web.sh (npm ci in web/)")
    page.goto(server.url)
    page.select_option("#mode", "extractive")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=90_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")
    page.wait_for_function("() => document.querySelectorAll('#thread-turns li').length === 1")
    doc = page.locator("#answer .cite[data-doc]").first.get_attribute("data-doc")
    made = page.request.post(
        f"{server.url}/api/collections", data={"name": "to check", "documents": [doc]}
    )
    assert made.status == 201, made.text()

    # the reopened answer, its bar, the picker with the collection chosen and a refusal said
    page.reload()
    page.wait_for_function(ANSWERED, timeout=60_000)
    page.wait_for_selector("section.feedback[data-given='0']")
    page.wait_for_selector("#scope-picker[data-ready=true]")
    page.click("#scope-picker summary")
    page.select_option("#scope-collection", "to check")
    assert page.is_visible("#scope-manage")
    page.fill("#scope-rename-name", "")
    page.click("#scope-rename")
    page.wait_for_selector("#scope-save-status[data-kind=error]")
    page.once("dialog", lambda dialog: dialog.accept(""))
    page.locator("#thread-list .thread-rename").first.click()
    page.wait_for_selector("#thread-note[data-kind=error]")

    page.add_script_tag(path=str(AXE))
    violations, passed = _violations(page, "#scope-picker", "#threads", "section.feedback")
    assert violations == [], violations
    # what the panels add was checked: names of buttons, labels of fields, contrast
    assert {"button-name", "label", "color-contrast"} <= set(passed), passed
    # the errors are announced: each is in a live region
    for live in ("#scope-save-status", "#thread-note", "section.feedback .feedback-status"):
        assert page.get_attribute(live, "aria-live") == "polite", live
