"""The cited region of a PDF page as a PNG, its passage highlighted: the I/O shell of the HTML
report's images (pypdfium2 renders, Pillow draws).

The highlight is the span's per-line rects (:func:`truthbase.geometry.span_line_rects`, PDF
user space, y up), drawn on the page rendered unrotated, so user space maps to pixels by the
crop box alone; the picture is then turned by the page's own rotation, as a reader sees it, and
cut to the band of the highlighted lines across the page as it is read.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image, ImageDraw

from ..model import Rect

__all__ = ["file_has_bytes", "render_cited_region"]

# 2x of 72 dpi: sharp on a laptop screen, a few hundred KB a citation.
_SCALE = 2.0
# Points above and below the highlighted lines that are kept for context (about three lines).
_MARGIN_PT = 40.0
_FILL = (255, 214, 0, 100)
_EDGE = (214, 150, 0, 255)


def file_has_bytes(path: Path, sha256: str) -> bool:
    """Whether the file at ``path`` is there and hashes to ``sha256`` (the document's id): an
    image is rendered only from the very bytes that were indexed."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return False
    return digest.hexdigest() == sha256


def _turned(
    box: tuple[float, float, float, float], rotation: int, size: tuple[int, int]
) -> tuple[float, float, float, float]:
    """A pixel box of an image of ``size`` as it lies once the image is turned clockwise by
    ``rotation`` degrees (90, 180 or 270)."""
    x0, y0, x1, y1 = box
    width, height = size
    if rotation == 90:
        return (height - y1, x0, height - y0, x1)
    if rotation == 180:
        return (width - x1, height - y1, width - x0, height - y0)
    return (y0, width - x1, y1, width - x0)


def render_cited_region(path: Path, unit: int, rects: Sequence[Rect]) -> bytes:
    """Page ``unit`` (0-based) of the PDF at ``path``, cut to the band of ``rects`` with some
    lines around it, the rects highlighted; PNG bytes. The whole page when there are no
    rects."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[unit]
        rotation = page.get_rotation()
        page.set_rotation(0)
        left, _bottom, _right, top = page.get_cropbox()
        image = page.render(scale=_SCALE).to_pil().convert("RGBA")
    finally:
        pdf.close()
    boxes = [
        ((x0 - left) * _SCALE, (top - y1) * _SCALE, (x1 - left) * _SCALE, (top - y0) * _SCALE)
        for x0, y0, x1, y1 in rects
    ]
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for box in boxes:
        draw.rectangle(box, fill=_FILL, outline=_EDGE, width=2)
    shown = Image.alpha_composite(image, overlay).convert("RGB")
    if rotation:
        # Turned as a reader sees the page, so that the band cut below runs along its lines.
        boxes = [_turned(box, rotation, shown.size) for box in boxes]
        shown = shown.rotate(-rotation, expand=True)
    if boxes:
        margin = _MARGIN_PT * _SCALE
        upper = max(0, int(min(b[1] for b in boxes) - margin))
        lower = min(shown.height, int(max(b[3] for b in boxes) + margin))
        if lower > upper:
            shown = shown.crop((0, upper, shown.width, lower))
    out = io.BytesIO()
    shown.save(out, format="PNG", optimize=True)
    return out.getvalue()
