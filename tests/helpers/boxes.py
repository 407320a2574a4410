"""Glyph boxes as schema 14 and earlier stored them, for the packed-boxes tests."""

from __future__ import annotations

import numpy as np

from truthbase.model import Rect


def float32_rows(boxes: list[Rect | None]) -> bytes:
    """What schema 14 and earlier stored: float32 (len(text), 4), NaN for no box."""
    table = np.full((len(boxes), 4), np.nan, dtype=np.float32)
    for i, box in enumerate(boxes):
        if box is not None:
            table[i] = box
    return table.tobytes()
