"""Canonical offsets of an EPUB unit to DOM positions in its sanitized XHTML, and back.

A DOM position is ``(node_path, node_offset)``: ``node_path`` is a :data:`NodePath` (element
child indexes from ``<body>``, elements only, then the text node's index among its parent's
text nodes) and ``node_offset`` a code-point offset inside that text node's data. In the browser::

    let n = body; for (const i of path.slice(0, -1)) n = n.children[i];
    const text = [...n.childNodes].filter(c => c.nodeType === Node.TEXT_NODE)[path.at(-1)];

(DOM ranges count UTF-16 code units: convert with ``utf16_offset`` when a text node holds
characters outside the BMP.)

Synthesized canonical characters (inserted line breaks and table-cell separators) have no DOM
position: ``epub_dom_position`` returns None for them. A collapsed run of whitespace maps to the
first whitespace character of the run in the DOM.
"""

from __future__ import annotations

import bisect
import json
from typing import Any

from ..model import DomMap, DomRun, NodePath

DomPosition = tuple[NodePath, int]
DomSegment = tuple[NodePath, int, int]  # a text node and [start, end) inside it

_FORMAT = 1


def epub_dom_position(unit_map: DomMap, canonical_offset: int) -> DomPosition | None:
    """Where canonical character ``canonical_offset`` is in the DOM; None when synthesized."""
    runs = unit_map.runs
    i = bisect.bisect_right(runs, canonical_offset, key=lambda r: r.start) - 1
    if i < 0 or canonical_offset >= runs[i].end:
        return None
    run = runs[i]
    return unit_map.nodes[run.node], run.offset + canonical_offset - run.start


def _run_end_key(run: DomRun) -> tuple[int, int]:
    return run.node, run.offset + run.end - run.start


def epub_canonical_offset(unit_map: DomMap, node_path: NodePath, node_offset: int) -> int | None:
    """The canonical offset of a DOM position: the first canonical character at or after it.

    A position inside collapsed whitespace or in a text node that contributes no character
    maps to the next canonical character (the end of the text when there is none), so a DOM
    selection [a, b) becomes the canonical span [f(a), f(b)). None for an unknown node path.
    """
    try:
        node = unit_map.nodes.index(tuple(node_path))
    except ValueError:
        return None
    runs = unit_map.runs
    if not runs:
        return 0
    i = bisect.bisect_right(runs, (node, node_offset), key=_run_end_key)
    if i == len(runs):
        return runs[-1].end
    run = runs[i]
    if run.node == node and run.offset <= node_offset:
        return run.start + node_offset - run.offset
    return run.start


def epub_dom_segments(unit_map: DomMap, start: int, end: int) -> list[DomSegment]:
    """The text-node pieces that show canonical span [start, end), in document order.

    One segment per text node, from its first to its last mapped character, so collapsed
    whitespace between them is covered; wrap each in a highlight element or range.
    """
    segments: list[DomSegment] = []
    runs = unit_map.runs
    i = max(bisect.bisect_right(runs, start, key=lambda r: r.start) - 1, 0)
    while i < len(runs) and runs[i].start < end:
        run = runs[i]
        lo, hi = max(run.start, start), min(run.end, end)
        i += 1
        if lo >= hi:
            continue
        path = unit_map.nodes[run.node]
        a = run.offset + lo - run.start
        b = run.offset + hi - run.start
        if segments and segments[-1][0] == path:
            segments[-1] = (path, segments[-1][1], b)
        else:
            segments.append((path, a, b))
    return segments


def epub_dom_range(
    unit_map: DomMap, start: int, end: int
) -> tuple[DomPosition, DomPosition] | None:
    """A DOM range (start position, exclusive end position) for canonical span [start, end)."""
    segments = epub_dom_segments(unit_map, start, end)
    if not segments:
        return None
    first, last = segments[0], segments[-1]
    return (first[0], first[1]), (last[0], last[2])


def utf16_offset(text: str, offset: int) -> int:
    """A code-point offset into ``text`` as the UTF-16 offset a DOM Range expects."""
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def dom_map_to_json(unit_map: DomMap) -> str:
    """The map without its HTML (store that separately): compact JSON, version 1."""
    return json.dumps(
        {
            "v": _FORMAT,
            "nodes": [list(p) for p in unit_map.nodes],
            "runs": [list(r) for r in unit_map.runs],
            "anchors": unit_map.anchors,
            "linear": unit_map.linear,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def dom_map_from_json(data: str, html: str) -> DomMap:
    """Inverse of :func:`dom_map_to_json`, given the stored sanitized HTML."""
    raw: dict[str, Any] = json.loads(data)
    if raw.get("v") != _FORMAT:
        raise ValueError(f"unknown DOM map format {raw.get('v')!r}")
    return DomMap(
        html=html,
        nodes=[tuple(int(i) for i in p) for p in raw["nodes"]],
        runs=[DomRun(*(int(x) for x in r)) for r in raw["runs"]],
        anchors={str(k): int(v) for k, v in raw["anchors"].items()},
        linear=bool(raw["linear"]),
    )
