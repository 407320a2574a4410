"""The extractive answerer without a model (a hashing embedder, refusals off) and sources made
from text, for the unit tests of answer selection."""

from __future__ import annotations

from truthbase.answer import ExtractiveAnswerer, Source
from truthbase.config import ExtractiveSettings
from truthbase.embed._fake import HashingEmbedder

__all__ = ["answerer", "source"]


def source(n: int, text: str, start: int = 0, unit: int = 0) -> Source:
    """Source ``n`` holding ``text`` at unit offset ``start`` (no rects: nothing is drawn)."""
    return Source(
        n=n,
        doc_id="d" * 64,
        title="raptor",
        unit=unit,
        start=start,
        end=start + len(text),
        text=text,
        rects=(),
    )


def answerer(**settings: object) -> ExtractiveAnswerer:
    """The extractive answerer with ``settings``, answering whatever the support (threshold 0)."""
    return ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, weak_threshold=0.0, **settings)
    )
