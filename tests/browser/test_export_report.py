"""The HTML evidence report in Chromium: opened from file:// with scripts off and every network
request refused, it shows the answer and each cited region's image (decoded: naturalWidth > 0),
and asks for nothing but itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers.indexes import copy_db
from truthbase.cli import cli

pytestmark = pytest.mark.slow


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_report_opens_offline_with_its_images(
    browser: Any, seed_db: Path, tmp_path: Path
) -> None:
    db = copy_db(seed_db, tmp_path / "export.sqlite")
    question = "How does the AI RMF define risk?"
    answer = json.loads(_cli("--db", str(db), "ask", question, "--json", "--mode", "extractive"))
    assert answer["citations"], answer
    report = tmp_path / "report.html"
    _cli("--db", str(db), "export", "--answer", str(answer["id"]), "--out", str(report))

    context = browser.new_context(java_script_enabled=False, offline=True)
    requested: list[str] = []
    context.on("request", lambda r: requested.append(r.url))
    context.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort(),
    )
    page = context.new_page()
    try:
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("h2").first.inner_text() == question
        images = page.locator(".citation img")
        assert images.count() == len(answer["citations"])
        widths = page.eval_on_selector_all(
            ".citation img", "imgs => imgs.map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        assert all(done and w > 0 and h > 0 for done, w, h in widths), widths
        # the page's own script would not run: the evidence is data, not a script
        assert page.locator("script").count() == 0
        assert page.locator("pre#truthbase-evidence").is_hidden()
    finally:
        context.close()
    assert all(u.startswith(("file:", "data:")) for u in requested), requested
