"""Ruled tables, step one: pdfium's rules (stroked lines, rectangle edges) to grids.

Pure geometry in the page's *reading frame* (:func:`frame_point`: u along the lines, v from one
line to the next, for text turned by 0, 90, 180 or 270 degrees). Axis-aligned segments are
merged where they overlap (:data:`SNAP`), and crossing horizontal and vertical rules make a grid
when enough of their pairs cross (``_MIN_LATTICE``). What a grid holds is decided by
:mod:`.tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Rect

__all__ = ["SNAP", "Grid", "Rule", "find_grids", "frame_point", "frame_rect"]

# Rules closer than this (points) are one rule: a filled hairline rectangle has two long edges
# half a point apart, and adjacent cells' borders are drawn twice.
SNAP = 3.0
MIN_RULE = 2.0  # shorter axis-aligned segments are glyph outlines or tick marks, not rules
SKEW = 0.5  # how far a segment's ends may differ across its axis and still be axis-aligned
# Least share of crossing (column rule, row rule) pairs. Measured: the corpus tables' grids have
# 0.76 (NICS, spanning group headers) to 1.0; RAPTOR's figure 1 (boxes and arrows) 0.33 to 0.54.
_MIN_LATTICE = 0.6


@dataclass(frozen=True, slots=True)
class Rule:
    """A straight segment of a path in PDF user space, from (x0, y0) to (x1, y1)."""

    x0: float
    y0: float
    x1: float
    y1: float


def frame_point(x: float, y: float, rotation: int) -> tuple[float, float]:
    """User-space (x, y) to the reading frame (u along the lines, v down the lines) of text
    turned ``rotation`` degrees counter-clockwise in user space (as a page with that /Rotate,
    clockwise, shows it upright). Only differences matter, so no origin is subtracted."""
    r = rotation % 360
    if r == 90:
        return y, x
    if r == 180:
        return -x, y
    if r == 270:
        return -y, -x
    return x, -y


def frame_rect(box: Rect, rotation: int) -> Rect:
    """A user-space box in the reading frame, as (u0, v0, u1, v1) with u0 <= u1, v0 <= v1."""
    u0, v0 = frame_point(box[0], box[1], rotation)
    u1, v1 = frame_point(box[2], box[3], rotation)
    return (min(u0, u1), min(v0, v1), max(u0, u1), max(v0, v1))


@dataclass(frozen=True, slots=True)
class _Seg:
    """An axis-aligned rule in the frame: at ``at`` (v for horizontal, u for vertical), from
    ``lo`` to ``hi`` along the other axis."""

    at: float
    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class Grid:
    """One ruled table in the reading frame: its column rules ``xs`` and row rules ``ys``
    (sorted) and the vertical segments, to tell which cells span several columns."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    verticals: tuple[_Seg, ...]
    horizontals: tuple[_Seg, ...] = ()

    def lattice(self) -> float:
        """The share of (column rule, row rule) pairs that cross: near 1 for a table's grid,
        low for a figure's boxes and arrows, whose rules line up only by chance."""
        hit = 0
        for x in self.xs:
            for y in self.ys:
                if any(
                    abs(v.at - x) <= SNAP and v.lo - SNAP <= y <= v.hi + SNAP
                    for v in self.verticals
                ) and any(
                    abs(h.at - y) <= SNAP and h.lo - SNAP <= x <= h.hi + SNAP
                    for h in self.horizontals
                ):
                    hit += 1
        return hit / (len(self.xs) * len(self.ys))

    def contains(self, u: float, v: float) -> bool:
        return self.xs[0] <= u <= self.xs[-1] and self.ys[0] <= v <= self.ys[-1]

    def separates(self, column: int, v_lo: float, v_hi: float) -> bool:
        """True when a vertical rule at ``xs[column]`` runs through the band [v_lo, v_hi]."""
        u = self.xs[column]
        mid = (v_lo + v_hi) / 2
        return any(
            abs(s.at - u) <= SNAP and s.lo - SNAP <= mid <= s.hi + SNAP for s in self.verticals
        )


def _merge(segs: list[_Seg]) -> list[_Seg]:
    """Snap segments at nearly the same ``at`` together, then join overlapping ones."""
    segs = sorted(segs, key=lambda s: s.at)
    groups: list[list[_Seg]] = []
    for s in segs:
        if groups and s.at - groups[-1][0].at <= SNAP:
            groups[-1].append(s)
        else:
            groups.append([s])
    out: list[_Seg] = []
    for group in groups:
        at = sum(s.at for s in group) / len(group)
        run: _Seg | None = None
        for s in sorted(group, key=lambda s: s.lo):
            if run is not None and s.lo <= run.hi + SNAP:
                run = _Seg(at, run.lo, max(run.hi, s.hi))
            else:
                if run is not None:
                    out.append(run)
                run = _Seg(at, s.lo, s.hi)
        if run is not None:
            out.append(run)
    return out


def _cluster(values: Sequence[float]) -> tuple[float, ...]:
    values = sorted(values)
    out: list[list[float]] = []
    for v in values:
        if out and v - out[-1][-1] <= SNAP:
            out[-1].append(v)
        else:
            out.append([v])
    return tuple(sum(g) / len(g) for g in out)


def find_grids(rules: Sequence[Rule], rotation: int) -> list[Grid]:
    """The grids the rules draw: connected sets of crossing horizontal and vertical rules with at
    least two of each, in the reading frame of text turned ``rotation`` degrees."""
    horizontal: list[_Seg] = []
    vertical: list[_Seg] = []
    for rule in rules:
        u0, v0 = frame_point(rule.x0, rule.y0, rotation)
        u1, v1 = frame_point(rule.x1, rule.y1, rotation)
        if abs(v1 - v0) <= SKEW and abs(u1 - u0) >= MIN_RULE:
            horizontal.append(_Seg((v0 + v1) / 2, min(u0, u1), max(u0, u1)))
        elif abs(u1 - u0) <= SKEW and abs(v1 - v0) >= MIN_RULE:
            vertical.append(_Seg((u0 + u1) / 2, min(v0, v1), max(v0, v1)))
    hs, vs = _merge(horizontal), _merge(vertical)
    # Connected components over "crosses" (union-find; horizontals 0..len(hs)-1, then verticals).
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # A horizontal and a vertical rule cross when each one's position lies within the other's
    # extent (SNAP either side): tested for all pairs at once. The components do not depend on
    # the order of the unions.
    if hs and vs:
        h_at = np.array([h.at for h in hs])[:, None]
        h_lo = np.array([h.lo for h in hs])[:, None]
        h_hi = np.array([h.hi for h in hs])[:, None]
        v_at = np.array([v.at for v in vs])[None, :]
        v_lo = np.array([v.lo for v in vs])[None, :]
        v_hi = np.array([v.hi for v in vs])[None, :]
        cross = (
            (h_lo - SNAP <= v_at)
            & (v_at <= h_hi + SNAP)
            & (v_lo - SNAP <= h_at)
            & (h_at <= v_hi + SNAP)
        )
        for i, j in zip(*np.nonzero(cross), strict=True):
            a, b = find(int(i)), find(len(hs) + int(j))
            if a != b:
                parent[a] = b
    members: dict[int, tuple[list[_Seg], list[_Seg]]] = {}
    for i, h in enumerate(hs):
        members.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(vs):
        members.setdefault(find(len(hs) + j), ([], []))[1].append(v)
    grids: list[Grid] = []
    for h_segs, v_segs in members.values():
        xs, ys = _cluster([s.at for s in v_segs]), _cluster([s.at for s in h_segs])
        grid = Grid(xs=xs, ys=ys, verticals=tuple(v_segs), horizontals=tuple(h_segs))
        if len(xs) >= 2 and len(ys) >= 2 and grid.lattice() >= _MIN_LATTICE:
            grids.append(grid)
    grids.sort(key=lambda g: (g.ys[0], g.xs[0]))
    return grids
