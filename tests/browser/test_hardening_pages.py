"""The pages under their Content-Security-Policy in Chromium (nothing they need is blocked:
pdf.js and its worker, Swagger UI), and `/?q=` only filling the question in."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.browser import WAIT_READY, LiveServer

pytestmark = pytest.mark.slow


def _csp_reports(page: Any) -> list[str]:
    reports: list[str] = []
    page.on(
        "console",
        lambda m: reports.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return reports


def test_a_link_with_a_question_only_fills_it_in(page: Any, live_server: LiveServer) -> None:
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    page.goto(f"{live_server.url}/?q=What+is+GV.OC%3F&mode=agent")
    page.wait_for_load_state("networkidle")
    assert page.input_value("#question") == "What is GV.OC?"
    assert posted == []  # asking takes a click


def test_the_pages_viewer_and_docs_run_under_their_csp(page: Any, live_server: LiveServer) -> None:
    reports = _csp_reports(page)
    page.goto(live_server.url)
    page.wait_for_load_state("networkidle")
    doc = page.request.get(f"{live_server.url}/api/documents").json()[0]["id"]
    response = page.goto(f"{live_server.url}/view?doc={doc}&page=1&start=0&end=20")
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    page.wait_for_function(WAIT_READY)
    page.goto(f"{live_server.url}/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert reports == []
