"""Browser test helpers: the real server in a thread (:class:`LiveServer`), where Chromium and
the artifacts are, the test's own PDF-to-viewport arithmetic (no pdf.js) and DOM readers for
the viewer."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.corpus import REPO
from truthbase.config import Settings
from truthbase.model import PageGeometry, Rect
from truthbase.server import create_app

CHROMIUM = Path(os.environ.get("TRUTHBASE_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = REPO / "artifacts"


class LiveServer:
    """The app over ``db``, or with ``settings`` (a scripted model's, say) when given."""

    def __init__(self, db: Path, settings: Settings | None = None) -> None:
        import uvicorn

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(settings if settings is not None else Settings(db=db)),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


CSS_UNITS = 96 / 72  # zoom 1 (100%): one PDF point is 4/3 CSS pixels


@contextmanager
def checked_page(browser: Any, **context_options: Any) -> Iterator[Any]:
    """A page of a fresh context (1400x1000 at scale 1, plus ``context_options``) with a 30 s
    default timeout; an uncaught page error fails the test when the block ends."""
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000}, device_scale_factor=1, **context_options
    )
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, errors


def _normalized(r: Rect) -> Rect:
    return (min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3]))


def view_box(geometry: PageGeometry) -> Rect:
    """The page's visible box: the crop box clipped to the media box (the media box when they
    do not meet)."""
    m, c = _normalized(geometry.mediabox), _normalized(geometry.cropbox)
    box = (max(m[0], c[0]), max(m[1], c[1]), min(m[2], c[2]), min(m[3], c[3]))
    return box if box[0] < box[2] and box[1] < box[3] else m


def to_viewport(rect: Rect, geometry: PageGeometry, zoom: float, extra_rotation: int = 0) -> Rect:
    """A user-space rect to (left, top, right, bottom) page pixels at ``zoom`` (CSS px, y down)
    with the page's own rotation plus ``extra_rotation`` (clockwise degrees)."""
    s = zoom * CSS_UNITS
    vx0, vy0, vx1, vy1 = view_box(geometry)
    rotation = (geometry.rotation + extra_rotation) % 360

    def point(x: float, y: float) -> tuple[float, float]:
        if rotation == 0:
            return (x - vx0) * s, (vy1 - y) * s
        if rotation == 90:
            return (y - vy0) * s, (x - vx0) * s
        if rotation == 180:
            return (vx1 - x) * s, (y - vy0) * s
        if rotation == 270:
            return (vy1 - y) * s, (vx1 - x) * s
        raise ValueError(f"rotation {rotation}")

    ax, ay = point(rect[0], rect[1])
    bx, by = point(rect[2], rect[3])
    return min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)


READ_BOXES = """() => {
  const page = document.querySelector('.tb-page');
  if (!page) return null;
  const p = page.getBoundingClientRect();
  const badge = document.querySelector('.badge');
  return {
    page: Number(page.dataset.page),
    scale: Number(page.dataset.scale),
    rotation: Number(page.dataset.rotation),
    viewBox: page.dataset.viewBox.split(',').map(Number),
    width: p.width,
    height: p.height,
    badge: !badge || badge.hidden ? '' : badge.textContent,
    boxes: [...page.querySelectorAll('.hl')].map((h) => {
      const r = h.getBoundingClientRect();
      return {
        kind: h.dataset.kind, line: Number(h.dataset.line), approximate: h.dataset.approximate,
        left: r.left - p.left, top: r.top - p.top,
        right: r.right - p.left, bottom: r.bottom - p.top,
      };
    }),
  };
}"""

WAIT_READY = "() => document.querySelector('#viewer')?.dataset.viewerState === 'ready'"


def max_error(measured: list[dict[str, Any]], expected: list[Rect]) -> float:
    assert len(measured) == len(expected), (len(measured), len(expected))
    worst = 0.0
    for box, want in zip(measured, expected, strict=True):
        got = (box["left"], box["top"], box["right"], box["bottom"])
        worst = max(worst, *(abs(g - w) for g, w in zip(got, want, strict=True)))
    return worst


def ink_shares(page: Any, kind: str = "strong") -> list[float]:
    """For each highlight box of ``kind``: the share of dark pixels in a screenshot of it
    (decoded here, not in the page: the page's CSP allows no fetch of a data: URL)."""
    from io import BytesIO

    import numpy as np
    from PIL import Image

    shares: list[float] = []
    count = page.locator(f".hl-{kind}").count()
    for i in range(count):
        box = page.locator(f".hl-{kind}").nth(i)
        box.evaluate("(h) => h.scrollIntoView({block: 'center', inline: 'center'})")
        r = box.bounding_box()
        assert r is not None
        clip = {
            "x": r["x"] + 1,
            "y": r["y"] + 1,
            "width": r["width"] - 2,
            "height": r["height"] - 2,
        }
        if clip["width"] < 1 or clip["height"] < 1:
            shares.append(0.0)
            continue
        png = page.screenshot(clip=clip)
        rgb = np.asarray(Image.open(BytesIO(png)).convert("RGB"), dtype=np.float32)
        luminance = 0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]
        shares.append(float((luminance < 110).mean()) if luminance.size else 0.0)
    return shares
