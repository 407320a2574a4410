"""Packed glyph boxes (truthbase.store.boxes): every box decodes bit for bit as it was encoded
(so every highlight rect drawn from the store is the one drawn at ingest), a page off any grid
falls back to float32 rows, the float32 rows of schema 14 and earlier read as they were, and an
index of schema 12 is re-packed in place when opened. Over the real seed corpus, through both
backends: tests/integration/test_boxes_seed.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.boxes import float32_rows
from truthbase.geometry import span_line_rects
from truthbase.model import ExtractedDocument, Rect, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.store import SQLiteStore
from truthbase.store.boxes import FLOAT32, GRID, MAGIC, decode_boxes, encode_boxes, repacked
from truthbase.store.sqlite import SCHEMA_VERSION


def as_float32(boxes: list[Rect | None]) -> list[Rect | None]:
    """The boxes as float32 holds them (pdfium's are float32 already)."""
    out: list[Rect | None] = []
    for box in boxes:
        out.append(None if box is None else tuple(float(np.float32(v)) for v in box))  # type: ignore[misc]
    return out


def page(seed: int = 3) -> tuple[str, list[Rect | None]]:
    """Two lines of text with a synthesized space and break, advances that repeat per letter
    and float32 jitter, as pdfium's loose boxes have them."""
    rng = np.random.default_rng(seed)
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog"]
    advance = {c: float(rng.uniform(3, 9)) for c in "abcdefghijklmnopqrstuvwxyz"}
    text, boxes = "", []
    for line, baseline in ((0, 700.123), (1, 687.5)):
        x = 72.0 + line * 0.37
        for w, word in enumerate(words[line * 4 : line * 4 + 5]):
            if w:
                text += " "
                boxes.append(None)
                x += 2.5
            for c in word:
                right = x + advance[c] * float(rng.choice([1.0, 1.0000001]))
                boxes.append((x, baseline - 2.1, right, baseline + 8.9))
                text += c
                x = right
        if line == 0:
            text += "\n"
            boxes.append(None)
    return text, as_float32(boxes)


def test_boxes_decode_bit_for_bit_and_small() -> None:
    text, boxes = page()
    blob = encode_boxes(text, boxes)
    assert blob is not None and blob[:4] == MAGIC and blob[4] == GRID
    assert decode_boxes(blob, text) == boxes
    assert len(blob) < 4 * len(text)  # float32 rows take 16 a character
    for start, end in ((0, len(text)), (2, 17), (5, 6), (len(text) - 3, len(text))):
        assert span_line_rects(text, decode_boxes(blob, text), start, end) == span_line_rects(
            text, boxes, start, end
        )


def test_a_lone_surrogate_in_the_text_packs_too() -> None:
    boxes: list[Rect | None] = as_float32([(1.5, 2.0, 3.0, 4.0), (3.0, 2.0, 4.5, 4.0)])
    assert decode_boxes(encode_boxes("a\ud800", boxes), "a\ud800") == boxes


def test_a_page_without_boxes_is_none_and_reads_back_empty() -> None:
    assert encode_boxes("ab", [None, None]) is None
    assert decode_boxes(None, "ab") == [None, None]


def test_boxes_must_match_the_text() -> None:
    text, boxes = page()
    with pytest.raises(ValueError):
        encode_boxes(text + "x", boxes)
    blob = encode_boxes(text, boxes)
    with pytest.raises(ValueError):
        decode_boxes(blob, text[:-1])


def test_values_on_no_grid_fall_back_to_float32_rows() -> None:
    boxes: list[Rect | None] = as_float32([(1e-30, 2.0, 3.0, 4.0), None, (5.0, 6.0, 7.0, 8.5)])
    blob = encode_boxes("a b", boxes)
    assert blob is not None and blob[4] == FLOAT32
    assert decode_boxes(blob, "a b") == boxes


def test_float32_rows_of_earlier_schemas_read_as_they_were_and_repack() -> None:
    text, boxes = page(7)
    old = float32_rows(boxes)
    assert decode_boxes(old, text) == boxes
    packed = repacked(old, text)
    assert packed is not None and packed[:4] == MAGIC and len(packed) < len(old) / 4
    assert decode_boxes(packed, text) == boxes
    assert repacked(packed, text) is None and repacked(None, text) is None


def test_a_version_12_index_is_repacked_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    text, boxes = page(11)
    document = ExtractedDocument(
        sha256="old",
        title="Old",
        path="/old.pdf",
        kind="pdf",
        units=[Unit(index=0, text=text, boxes=boxes), Unit(index=1, text="ab", boxes=[None] * 2)],
        extractor_version="t",
    )
    store = SQLiteStore(path)
    store.add_document(
        IndexedDocument(
            document=document,
            chunks=[],
            vectors=np.zeros((0, 4), np.float32),
            embedder=IndexEmbedder("m", 4),
        )
    )
    store.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE units SET boxes = ? WHERE idx = 0", (float32_rows(boxes),))
    db.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        unit = store.unit("old", 0)
        assert unit is not None and unit.boxes == boxes
        empty = store.unit("old", 1)
        assert empty is not None and empty.boxes == [None, None]
    finally:
        store.close()
    db = sqlite3.connect(path)
    blob, version = db.execute(
        "SELECT u.boxes, m.value FROM units u, meta m WHERE u.idx = 0 AND m.key = 'schema_version'"
    ).fetchone()
    db.close()
    assert bytes(blob)[:4] == MAGIC
    assert int(version) == SCHEMA_VERSION == 22
