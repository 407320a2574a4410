"""Shared threads in Chromium, over a copy of the seed index with three users: ann asks, shares
her thread with the "Share" button and gets its link; one document her answer cites is then
made bob's private one. bob (who may see every cited document) opens the link: the thread shows
read-only (no question form), and a source opens its highlight in the viewer. cat (who may not
see that document) gets "no such shared thread" and none of the thread. ann's "Revoke" closes
the link: bob's reload says the same."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import READ_BOXES, WAIT_READY, LiveServer
from tests.helpers.indexes import use_copy
from truthbase import accounts
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
QUESTION = "How does RAPTOR segment the retrieval corpus before building its tree?"
ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)


@pytest.fixture(scope="module")
def own_db(seed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = use_copy(seed_db, tmp_path_factory.mktemp("shares-browser") / "seed.sqlite")
    store = SQLiteStore(db)
    try:
        for name in ("ann", "bob", "cat"):
            accounts.add_user(store, name, PASSWORD)
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def server(own_db: Path) -> Iterator[LiveServer]:
    with LiveServer(own_db) as live:
        yield live


def _signed_in(browser: Any, server: LiveServer, name: str, errors: list[str], path: str) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(f"{name}: {exc}"))
    page.goto(f"{server.url}{path}")
    assert "/login?next=" in page.url
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#login-button")
    page.wait_for_url(f"{server.url}{path}")
    return page


class _FileDownloads:
    """A page's requests for document files: the chat prefetches every cited PDF while the
    answer streams, and pdf.js goes on fetching the rest of the file in the background. A file
    made private while that runs fails its next request with an error in the page (pdf.js's
    MissingPDFException), which is not what this test is about, so it waits for them to end."""

    def __init__(self, page: Any) -> None:
        self.pending = 0
        self.seen = 0
        self.last = time.monotonic()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request: Any) -> None:
        if "/api/documents/" in request.url and request.url.endswith("/file"):
            self.pending += 1
            self.seen += 1
            self.last = time.monotonic()

    def _ended(self, request: Any) -> None:
        if "/api/documents/" in request.url and request.url.endswith("/file"):
            self.pending -= 1
            self.last = time.monotonic()

    def wait_quiet(self, page: Any, quiet_s: float = 1.5, limit_s: float = 60) -> None:
        """Until a file was requested and none has been in flight for ``quiet_s``."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.seen and not self.pending and time.monotonic() - self.last > quiet_s:
                return
            page.wait_for_timeout(100)  # lets Playwright deliver the page's events
        raise AssertionError(f"document files still loading: {self.pending} of {self.seen}")


def test_a_share_link_opens_for_who_may_see_and_not_for_others_until_revoked(
    browser: Any, server: LiveServer, own_db: Path
) -> None:
    errors: list[str] = []
    ann = _signed_in(browser, server, "ann", errors, "/")
    ann_files = _FileDownloads(ann)
    ann.select_option("#mode", "extractive")
    ann.fill("#question", QUESTION)
    ann.press("#question", "Enter")
    ann.wait_for_function(ANSWERED, timeout=90_000)
    assert ann.get_attribute("#answer", "data-state") == "done", ann.inner_text("#answer")
    ann.wait_for_function("() => new URLSearchParams(location.search).get('thread')")
    answer_text = ann.inner_text("#answer")
    cited = ann.locator("#answer .cite[data-doc]").first.get_attribute("data-doc")
    assert cited
    ann.click("#share-thread")
    ann.wait_for_selector("#share-link:not([hidden])")
    link = ann.input_value("#share-link")
    assert link.startswith(f"{server.url}/?shared=") and len(link.rsplit("=", 1)[1]) == 32
    path = link.removeprefix(server.url)

    ann_files.wait_quiet(ann)
    store = SQLiteStore(own_db)
    try:
        bob_user = store.user("bob")
        assert bob_user is not None
        assert store.set_document_access(cited, bob_user.id, "private")
    finally:
        store.close()

    bob = _signed_in(browser, server, "bob", errors, path)
    bob.wait_for_function(ANSWERED, timeout=60_000)
    heading = bob.inner_text("#shared-heading")
    assert heading == f"Shared thread (read-only): {QUESTION}", heading
    assert bob.is_hidden("#ask")  # read-only: nothing can be asked into ann's thread
    assert bob.locator("#shared-turns li").count() == 1
    assert bob.inner_text("#answer") == answer_text
    bob.locator("#sources .source-open:not([disabled])").first.click()
    bob.wait_for_function(WAIT_READY, timeout=60_000)
    boxes = bob.evaluate(READ_BOXES)
    assert [b for b in boxes["boxes"] if b["kind"] == "strong"], boxes

    cat = _signed_in(browser, server, "cat", errors, path)
    cat.wait_for_selector("#shared-thread .shared-error")
    assert "no such shared thread" in cat.inner_text("#shared-thread")
    assert QUESTION not in cat.content()
    assert cat.get_attribute("#answer", "data-state") == "empty"

    ann.click("#revoke-share")
    ann.wait_for_selector("#share-note >> text=The link is revoked.")
    bob.reload()
    bob.wait_for_selector("#shared-thread .shared-error")
    assert "no such shared thread" in bob.inner_text("#shared-thread")
    assert QUESTION not in bob.content()
    assert not errors, errors
