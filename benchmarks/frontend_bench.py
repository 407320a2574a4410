"""The chat page in the real browser (Debian's Chromium, never a downloaded one): how long from
opening a citation to its highlight on the page.

Two ways of opening a span, both timed inside the page (performance.now(), no Playwright round
trips in the figure):

- ``chat``: a question is asked on the chat page (extractive mode), and as soon as its answer is
  done each of its first three citations is opened in turn (preview, then "Open the page"), as a
  user does: the viewer's code, the document and the pages may have been prefetched while the
  answer streamed. ``highlight`` is the time until the strong highlight's box is in the viewer,
  ``page`` until the viewer says ``ready`` (highlight and the page's pixels).
- ``view``: the standalone /view?doc=...&page=... page, a fresh page load per span (the figure
  `make bench` reported before this module; it includes loading pdf.js and the document).

``web_dir`` serves another copy of web/ (say, an older checkout) to compare in one run.

Run alone: ``python benchmarks/frontend_bench.py [--web-dir DIR]`` (builds a seed index).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

# Resolves with the in-page times of one opening: the click on "Open the page" until the strong
# (else any) highlight box exists in #viewer, and until #viewer is "ready".
OPEN_AND_TIME = """async (i) => {
  const cites = [...document.querySelectorAll('#answer .cite:not([disabled])')];
  const cite = cites[i];
  if (!cite) return null;
  if (cite.getAttribute('aria-expanded') !== 'true') cite.click();
  const open = document.getElementById(cite.getAttribute('aria-controls'))
    ?.querySelector('.preview-open');
  if (!open) return null;
  const root = document.getElementById('viewer');
  const stale = root.querySelector('.tb-page');
  const started = performance.now();
  open.click();
  let highlight = null;
  const fresh = () => {
    const page = root.querySelector('.tb-page');
    return page && page !== stale ? page : null;
  };
  for (;;) {
    const page = fresh();
    if (highlight === null && page && page.querySelector('.hl')) highlight = performance.now();
    const state = root.dataset.viewerState;
    if (page && state === 'ready') {
      const done = performance.now();
      return {highlight: (highlight ?? done) - started, page: done - started};
    }
    if (state === 'error') return {error: root.textContent};
    await new Promise((r) => requestAnimationFrame(r));
  }
}"""

ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.getElementById('answer')?.dataset.state)"
)
READY = "() => document.querySelector('#viewer')?.dataset.viewerState === 'ready'"


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextmanager
def serve(db: Path, web_dir: Path | None = None) -> Iterator[str]:
    """The TruthBase server over ``db`` on a free port (uvicorn in a thread); yields its URL."""
    import uvicorn

    from truthbase.config import ServerSettings, Settings
    from truthbase.server import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    settings = Settings(db=db, server=ServerSettings(web_dir=web_dir))
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the bench server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def _summary(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_ms": percentile(values, 0.5),
        "p95_ms": percentile(values, 0.95),
    }


def bench_viewer(
    db: Path,
    questions: list[str],
    spans: list[dict[str, Any]],
    *,
    web_dir: Path | None = None,
    per_answer: int = 3,
) -> dict[str, Any] | None:
    """Open-to-highlight on the chat page and on /view; None without Debian's Chromium."""
    if not CHROMIUM.exists():
        return None
    from playwright.sync_api import sync_playwright

    highlight: list[float] = []
    page_drawn: list[float] = []
    first_highlight: list[float] = []
    view_times: list[float] = []
    errors: list[str] = []
    with serve(db, web_dir) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(120_000)
        for n, question in enumerate(questions):
            # A link only fills the question in (no auto-ask on page load): Enter asks.
            page.goto(f"{url}/?{urlencode({'q': question, 'mode': 'extractive'})}")
            page.press("#question", "Enter")
            page.wait_for_function(ANSWERED)
            for i in range(per_answer):
                timed = page.evaluate(OPEN_AND_TIME, i)
                if timed is None:
                    break
                if "error" in timed:
                    errors.append(str(timed["error"])[:200])
                    continue
                if n == 0:
                    continue  # the first answer warms the browser's cache and the server
                highlight.append(timed["highlight"])
                page_drawn.append(timed["page"])
                if i == 0:
                    first_highlight.append(timed["highlight"])
        for i, span in enumerate(spans):
            started = time.perf_counter()
            page.goto(f"{url}/view?{urlencode(span)}")
            page.wait_for_function(READY)
            if i:  # the first one warms pdf.js and the browser cache
                view_times.append(1000 * (time.perf_counter() - started))
        browser.close()
    return {
        "chat_highlight": _summary(highlight),
        "chat_first_citation_highlight": _summary(first_highlight),
        "chat_page_drawn": _summary(page_drawn),
        "view_page_load_to_ready": _summary(view_times),
        "errors": errors,
    }


def print_viewer(report: dict[str, Any] | None, label: str = "") -> None:
    if report is None:
        print(f"viewer{label}: skipped ({CHROMIUM} is missing)")
        return

    def fmt(key: str) -> str:
        r = report[key]
        p50, p95 = r["p50_ms"] or float("nan"), r["p95_ms"] or float("nan")
        return f"p50 {p50:.0f} ms (p95 {p95:.0f}, n {r['n']})"

    print(f"viewer{label}, open a citation on the chat page until highlighted: ", end="")
    print(f"{fmt('chat_highlight')} (goal: <= 300 ms)")
    print(f"  the answer's first citation only: {fmt('chat_first_citation_highlight')}")
    print(f"  until the page's pixels are drawn too: {fmt('chat_page_drawn')}")
    print(f"  /view, a fresh page load per span, until ready: {fmt('view_page_load_to_ready')}")
    if report["errors"]:
        print(f"  errors: {report['errors'][:3]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True, help="an index of the seed PDFs")
    parser.add_argument("--golden", type=Path, required=True, help="questions to ask")
    parser.add_argument("--web-dir", type=Path, action="append", default=[], help="compare")
    parser.add_argument("--questions", type=int, default=11)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from truthbase.config import Settings
    from truthbase.embed import load_embedder
    from truthbase.eval.golden import load_golden
    from truthbase.retrieve.hybrid import search
    from truthbase.store import SQLiteStore

    golden = load_golden(args.golden)
    questions = [q.question for q in golden.questions if q.answerable][: args.questions]
    settings = Settings()
    store = SQLiteStore(args.db)
    embedder = load_embedder(settings.embedder)
    spans = []
    for question in questions:
        for hit in search(store, embedder, question, settings.retrieval, k=1).hits:
            c = hit.chunk
            spans.append({"doc": c.doc_id, "page": c.unit + 1, "start": c.start, "end": c.end})
    store.close()
    out: dict[str, Any] = {}
    for web_dir in args.web_dir or [None]:
        label = f" ({web_dir})" if web_dir else ""
        out[str(web_dir or "web")] = report = bench_viewer(
            args.db, questions, spans, web_dir=web_dir
        )
        print_viewer(report, label)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
