"""The straight segments of a page's paths (the rules tables are drawn with), in user space.

The same pdfium calls as through pypdfium2.raw's bindings, made through prototypes with plain
``c_void_p``/``c_int`` arguments at the same addresses (as ``charread`` does for characters):
the bindings' typed pointer arguments cost more than the calls on pages with many paths.
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from .table_grid import MIN_RULE, SKEW
from .tables import Rule

# A page with more path segments than this is a drawing (a map, a chart), not a table to read.
MAX_SEGMENTS = 20000
_Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: _Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_VOID, _INT = ctypes.c_void_p, ctypes.c_int


def _proto(function: Any, restype: Any, *argtypes: Any) -> Any:
    address = ctypes.cast(function, ctypes.c_void_p).value
    if address is None:
        raise RuntimeError("pdfium function without an address")
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


class _PathCalls:
    def __init__(self) -> None:
        c = pdfium_c
        self.page_count = _proto(c.FPDFPage_CountObjects, _INT, _VOID)
        self.page_object = _proto(c.FPDFPage_GetObject, _VOID, _VOID, _INT)
        self.form_count = _proto(c.FPDFFormObj_CountObjects, _INT, _VOID)
        self.form_object = _proto(c.FPDFFormObj_GetObject, _VOID, _VOID, ctypes.c_ulong)
        self.object_type = _proto(c.FPDFPageObj_GetType, _INT, _VOID)
        self.matrix = _proto(c.FPDFPageObj_GetMatrix, _INT, _VOID, _VOID)
        self.count_segments = _proto(c.FPDFPath_CountSegments, _INT, _VOID)
        self.segment = _proto(c.FPDFPath_GetPathSegment, _VOID, _VOID, _INT)
        self.point = _proto(c.FPDFPathSegment_GetPoint, _INT, _VOID, _VOID, _VOID)
        self.segment_type = _proto(c.FPDFPathSegment_GetType, _INT, _VOID)
        self.close = _proto(c.FPDFPathSegment_GetClose, _INT, _VOID)


_CALLS: _PathCalls | None = None


def _calls() -> _PathCalls:
    global _CALLS
    if _CALLS is None:
        _CALLS = _PathCalls()
    return _CALLS


def _matrix(calls: _PathCalls, obj: int, outer: _Matrix, m: pdfium_c.FS_MATRIX) -> _Matrix:
    """The object's matrix composed with its form's (``outer``): object space to page space
    (``m``: a reused buffer)."""
    if not calls.matrix(obj, ctypes.addressof(m)):
        return outer
    a, b, c, d, e, f = outer
    return (
        m.a * a + m.b * c,
        m.a * b + m.b * d,
        m.c * a + m.d * c,
        m.c * b + m.d * d,
        m.e * a + m.f * c + e,
        m.e * b + m.f * d + f,
    )


def _path_rules(
    calls: _PathCalls,
    obj: int,
    count: int,
    m: _Matrix,
    out: list[Rule],
    xy: tuple[ctypes.c_float, ctypes.c_float],
) -> None:
    """Append the path's straight segments (``lineto`` and closing edges) in page space
    (``xy``: reused buffers for the points)."""
    x, y = xy
    x_at, y_at = ctypes.addressof(x), ctypes.addressof(y)
    get_segment, get_point = calls.segment, calls.point
    get_type, get_close = calls.segment_type, calls.close
    moveto, lineto = pdfium_c.FPDF_SEGMENT_MOVETO, pdfium_c.FPDF_SEGMENT_LINETO
    m0, m1, m2, m3, m4, m5 = m
    start: tuple[float, float] | None = None
    current: tuple[float, float] | None = None
    for i in range(count):
        seg = get_segment(obj, i)
        if not seg or not get_point(seg, x_at, y_at):
            continue
        px, py = x.value, y.value
        point = (m0 * px + m2 * py + m4, m1 * px + m3 * py + m5)
        kind = get_type(seg)
        if kind == moveto:
            start = current = point
            continue
        if kind == lineto and current is not None:
            out.append(Rule(current[0], current[1], point[0], point[1]))
        current = point
        if get_close(seg) and start is not None:
            out.append(Rule(point[0], point[1], start[0], start[1]))
            current = start


def read_rules(page: pdfium.PdfPage) -> list[Rule]:
    """Every straight segment of the page's paths, forms included, in user space; none on a
    page with more than ``MAX_SEGMENTS`` of them.

    The paths are listed and their segments counted first: a page over the limit (a chart
    drawn in tens of thousands of curve segments) is known before any segment is read.
    """
    calls = _calls()
    path_kind, form_kind = pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_FORM
    object_type, count_segments = calls.object_type, calls.count_segments
    paths: list[tuple[int, int, _Matrix]] = []
    total = 0
    buffer = pdfium_c.FS_MATRIX()
    handle = ctypes.cast(page.raw, ctypes.c_void_p).value
    stack: list[tuple[int | None, _Matrix]] = [(None, _IDENTITY)]
    while stack:
        form, outer = stack.pop()
        if form is None:
            n, get_object, holder = int(calls.page_count(handle)), calls.page_object, handle
        else:
            n, get_object, holder = int(calls.form_count(form)), calls.form_object, form
        for i in range(n):
            obj = get_object(holder, i)
            kind = object_type(obj)
            if kind == path_kind:
                count = int(count_segments(obj))
                if count > 0:
                    total += count
                    if total > MAX_SEGMENTS:
                        return []
                    # Segment points are in the path's own space; its matrix (and its forms')
                    # maps them to the page's user space.
                    paths.append((obj, count, _matrix(calls, obj, outer, buffer)))
            elif kind == form_kind:
                stack.append((obj, _matrix(calls, obj, outer, buffer)))
    rules: list[Rule] = []
    xy = (ctypes.c_float(), ctypes.c_float())
    for obj, count, m in paths:
        _path_rules(calls, obj, count, m, rules, xy)
    return rules


def could_grid(rules: list[Rule]) -> bool:
    """False when ``find_grids`` finds no grid in any reading frame: it needs at least two
    horizontal and two vertical rules, and turning the frame by 90 degrees only swaps which is
    which (``frame_point`` negates or swaps coordinates, so the lengths it tests stay exact)."""
    across = along = 0
    for r in rules:
        dx, dy = abs(r.x1 - r.x0), abs(r.y1 - r.y0)
        if dy <= SKEW and dx >= MIN_RULE:
            across += 1
        elif dx <= SKEW and dy >= MIN_RULE:
            along += 1
        if across >= 2 and along >= 2:
            return True
    return False
