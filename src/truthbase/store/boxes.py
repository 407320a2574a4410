"""A unit's per-character glyph boxes as a compact blob, exactly: what decodes is bit for bit
what was encoded, so every highlight rect drawn from stored boxes is the one drawn at ingest.

pdfium's boxes are float32 in PDF user space. Each coordinate of a page is an integer multiple
of 2^-k for a small k (the float32 spacing of its magnitude: 2^-18 between 32 and 64 pt), so a
page's boxes become integers on that grid, checked exact in float64 when encoded. Consecutive
glyphs predict each other: a glyph starts where the previous one ended, a line keeps its
baseline band and height, and a character's advance is the one it had the last time on the
page. What is stored is the residue of those predictions (mostly 0 or small), zigzagged, as
LEB128 varints, zlib-compressed: about 2 bytes a character instead of 16.

Blob layout (little endian): the magic ``MAGIC`` (as float32 a NaN with a payload, which no
earlier blob starts with: those start with a coordinate or numpy's plain NaN), a format byte,
then for ``GRID``: k (one byte), the character count (uint32) and the compressed body (the
presence bits, then the four residue streams); for ``FLOAT32``: the compressed float32 rows (NaN:
no box), for pages whose coordinates sit on no grid. A blob without the magic is the float32
rows of schema 13 and earlier, read as they were written.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..model import BoxColumn, Rect

__all__ = ["FLOAT32", "GRID", "MAGIC", "decode_boxes", "encode_boxes", "repacked"]

MAGIC = b"TB\xc1\x7f"
GRID = 1
FLOAT32 = 2
_HEADER = struct.Struct("<4sBBI")  # magic, format, k, characters
#: The finest grid tried: past it the integers would leave float64's exact range.
_MAX_GRID_BITS = 40

Ints = npt.NDArray[np.int64]


def encode_boxes(text: str, boxes: Sequence[Rect | None]) -> bytes | None:
    """The blob of a unit's boxes (one per character of ``text``, None: no box); None when no
    character has a box (EPUB units, empty pages)."""
    if len(boxes) != len(text):
        raise ValueError(f"{len(text)} characters but {len(boxes)} boxes")
    if isinstance(boxes, BoxColumn):  # its arrays as they are: no tuple made per character
        present = np.frombuffer(boxes.present, dtype=np.uint8).astype(bool)
        if not present.any():
            return None
        dtype = np.float32 if boxes.values.typecode == "f" else np.float64
        values = np.frombuffer(boxes.values, dtype=dtype).reshape(-1, 4)
        rows = values[present].astype(np.float32)
    else:
        present = np.array([box is not None for box in boxes], dtype=bool)
        if not present.any():
            return None
        rows = np.array([box for box in boxes if box is not None], dtype=np.float32)
        rows = rows.reshape(-1, 4)
    found = _on_grid(rows)
    if found is None:
        table = np.full((len(boxes), 4), np.nan, dtype=np.float32)
        table[present] = rows
        return _HEADER.pack(MAGIC, FLOAT32, 0, len(boxes)) + zlib.compress(table.tobytes())
    bits, ints = found
    residues = _residues(ints, _codes(text, present))
    body = np.packbits(present).tobytes() + _varints(_zigzag(residues.reshape(-1)))
    return _HEADER.pack(MAGIC, GRID, bits, len(boxes)) + zlib.compress(body)


def decode_boxes(blob: bytes | None, text: str) -> list[Rect | None]:
    """The boxes of ``text``'s characters from a blob of :func:`encode_boxes` (or the float32
    rows of an earlier schema); all None for no blob."""
    if not blob:
        return [None] * len(text)
    if blob[:4] != MAGIC:
        return _from_table(np.frombuffer(blob, dtype=np.float32).reshape(-1, 4))
    _, kind, bits, count = _HEADER.unpack_from(blob)
    if count != len(text):
        raise ValueError(f"boxes of {count} characters for a text of {len(text)}")
    body = zlib.decompress(blob[_HEADER.size :])
    if kind == FLOAT32:
        return _from_table(np.frombuffer(body, dtype=np.float32).reshape(-1, 4))
    if kind != GRID:
        raise ValueError(f"unknown boxes format {kind}")
    mask_bytes = (count + 7) // 8
    mask = np.frombuffer(body[:mask_bytes], dtype=np.uint8)
    present = np.unpackbits(mask, count=count).astype(bool)
    residues = _unzigzag(_from_varints(body[mask_bytes:])).reshape(4, -1)
    ints = _from_residues(residues, _codes(text, present))
    values = ints.astype(np.float64) / float(2**bits)
    boxes: list[Rect | None] = [None] * count
    for i, row in zip(np.flatnonzero(present).tolist(), values.tolist(), strict=True):
        boxes[i] = (row[0], row[1], row[2], row[3])
    return boxes


def repacked(blob: bytes | None, text: str) -> bytes | None:
    """An earlier schema's float32 rows as :func:`encode_boxes` packs them (the migration of
    both backends); None for a blob that needs nothing (packed already, or none)."""
    if not blob or blob[:4] == MAGIC:
        return None
    return encode_boxes(text, decode_boxes(blob, text))


def _from_table(table: npt.NDArray[np.float32]) -> list[Rect | None]:
    values = table.astype(np.float64)
    boxes: list[Rect | None] = []
    for row in values.tolist():
        boxes.append(None if row[0] != row[0] else (row[0], row[1], row[2], row[3]))
    return boxes


def _on_grid(rows: npt.NDArray[np.float32]) -> tuple[int, Ints] | None:
    """(k, the rows as integer multiples of 2^-k) for the smallest k that holds every value
    exactly; None when none up to ``_MAX_GRID_BITS`` does (or a value is not finite)."""
    values = rows.astype(np.float64)
    if not np.isfinite(values).all():
        return None
    for bits in range(_MAX_GRID_BITS + 1):
        scaled = values * float(2**bits)
        ints = np.round(scaled)
        if np.array_equal(ints, scaled) and np.abs(ints).max() < 2**50:
            return bits, ints.astype(np.int64)
    return None


def _codes(text: str, present: npt.NDArray[np.bool_]) -> Ints:
    """The code point of each character that has a box, in order."""
    raw = text.encode("utf-32-le", "surrogatepass")  # a lone surrogate is a character too
    codes = np.frombuffer(raw, dtype=np.uint32).astype(np.int64)
    return codes[present]


def _same_code_order(codes: Ints) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """The positions grouped by character, in text order inside a group, and for each place of
    that order whether it starts a group (the character's first box on the page)."""
    order = np.argsort(codes, kind="stable").astype(np.int64)
    grouped = codes[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = grouped[1:] != grouped[:-1]
    return order, first


def _residues(ints: Ints, codes: Ints) -> Ints:
    """(4, n) residues: x0 from the previous glyph's x1, y0 from the previous y0, the advance
    (x1 - x0) from the same character's previous advance, the height from the previous one."""
    x0, y0, x1, y1 = ints[:, 0], ints[:, 1], ints[:, 2], ints[:, 3]
    advance, height = x1 - x0, y1 - y0
    order, first = _same_code_order(codes)
    previous_advance = np.zeros_like(advance)
    grouped = advance[order]
    earlier = np.zeros_like(grouped)
    earlier[1:] = grouped[:-1]
    earlier[first] = 0
    previous_advance[order] = earlier
    return np.stack(
        [
            x0 - np.concatenate([[0], x1[:-1]]),
            np.diff(y0, prepend=0),
            advance - previous_advance,
            np.diff(height, prepend=0),
        ]
    )


def _from_residues(residues: Ints, codes: Ints) -> Ints:
    """The (n, 4) integers :func:`_residues` came from."""
    start_gap, y0_step, advance_step, height_step = residues
    order, first = _same_code_order(codes)
    grouped = np.cumsum(advance_step[order])
    group_start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    before_group = np.concatenate([[0], grouped[:-1]])[group_start]
    advance = np.empty_like(advance_step)
    advance[order] = grouped - before_group
    advance_before = np.concatenate([[0], advance[:-1]])  # the previous glyph's
    x0 = np.cumsum(start_gap + advance_before)
    y0 = np.cumsum(y0_step)
    height = np.cumsum(height_step)
    return np.stack([x0, y0, x0 + advance, y0 + height], axis=1)


def _zigzag(values: Ints) -> npt.NDArray[np.uint64]:
    return ((values << 1) ^ (values >> 63)).astype(np.uint64)


def _unzigzag(values: npt.NDArray[np.uint64]) -> Ints:
    return (values >> np.uint64(1)).astype(np.int64) ^ -(values & np.uint64(1)).astype(np.int64)


def _varints(values: npt.NDArray[np.uint64]) -> bytes:
    """LEB128: seven bits a byte, low first, the high bit set on all but a value's last byte."""
    lengths = np.ones(len(values), dtype=np.int64)
    rest = values >> np.uint64(7)
    while rest.any():
        lengths += rest > 0
        rest >>= np.uint64(7)
    ends = np.cumsum(lengths)
    out = np.zeros(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    starts = ends - lengths
    for place in range(int(lengths.max()) if len(lengths) else 0):
        has = lengths > place
        chunk = (values[has] >> np.uint64(7 * place)) & np.uint64(0x7F)
        more = (lengths[has] > place + 1).astype(np.uint64) << np.uint64(7)
        out[starts[has] + place] = (chunk | more).astype(np.uint8)
    return out.tobytes()


def _from_varints(data: bytes) -> npt.NDArray[np.uint64]:
    raw = np.frombuffer(data, dtype=np.uint8)
    if not len(raw):
        return np.zeros(0, dtype=np.uint64)
    last = (raw & 0x80) == 0
    value_of = np.concatenate([[0], np.cumsum(last)[:-1]])  # which value each byte belongs to
    starts = np.flatnonzero(np.concatenate([[True], last[:-1]]))
    place = np.arange(len(raw)) - starts[value_of]
    parts = (raw & 0x7F).astype(np.uint64) << (7 * place).astype(np.uint64)
    return np.bitwise_or.reduceat(parts, starts)
