"""Browser fixtures: the real server (uvicorn in a thread, on a free port) and Debian's Chromium
driven by Python Playwright. No test tool ever downloads a browser: without /usr/bin/chromium
(scripts/install-system.sh installs it) these tests are skipped with that reason."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, LiveServer, checked_page

# Playwright must never fetch a browser of its own.
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


@pytest.fixture(scope="session")
def live_server(seed_db: Path) -> Iterator[LiveServer]:
    with LiveServer(seed_db) as server:
        yield server


@pytest.fixture(scope="session")
def golden_server(golden_db: Path) -> Iterator[LiveServer]:
    """The server over the seed PDFs plus the EPUB books of dev.json."""
    with LiveServer(golden_db) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: run scripts/install-system.sh (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    with checked_page(browser) as pg:
        yield pg
