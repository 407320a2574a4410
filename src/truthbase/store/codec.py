"""The row codec of both backends: how records become column values and back.

SQLite and PostgreSQL store the same columns in the same forms (JSON text, float32 blobs, glyph
boxes as :mod:`.boxes` packs them), so one codec serves both and an index copied from one to
the other (:mod:`.copy`) reads back equal. One difference: SQLite stores the chunk and window
vectors as int8 codes with a scale a row (:func:`vector_code`, a quarter of float32's bytes),
PostgreSQL as pgvector's float32; a copy writes the rows the codes stand for
(:func:`vectors_from_codes`), so both rank alike.
Pure functions over plain values; no connection in sight.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..extract.epub_map import dom_map_from_json, dom_map_to_json
from ..model import (
    Chunk,
    ChunkDraft,
    DocumentInfo,
    ExtractedDocument,
    OcrInfo,
    PageGeometry,
    Rect,
    TocEntry,
    Unit,
    Visibility,
)
from ..records import FloatMatrix, Segment, SegmentPart, StoredAnswer, StoredSegments
from ..text.fulltext import term_string
from .boxes import decode_boxes, encode_boxes

__all__ = [
    "UNIT_COLUMNS",
    "answer_row",
    "chunk_terms",
    "chunk_title_terms",
    "context_terms",
    "decode_boxes",
    "document_info",
    "document_row",
    "encode_boxes",
    "join_terms",
    "now_iso",
    "quantize",
    "rects_from_json",
    "rects_json",
    "section_terms",
    "segment_rows",
    "stored_answer",
    "stored_segments",
    "title_terms",
    "toc_from_json",
    "unit_from_row",
    "unit_rows",
    "vector_blob",
    "vector_code",
    "vector_code_rows",
    "vector_codes",
    "vector_literal",
    "vectors_from_codes",
]


def now_iso() -> str:
    """The time stamps of ingests and answers: UTC, whole seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def vector_blob(vector: FloatMatrix | Sequence[float]) -> bytes:
    """A vector as float32 bytes (SQLite's vector columns, both backends' summary vectors)."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def quantize(
    vectors: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Rows as int8 codes and a scale each: ``codes * scale`` is the row within scale / 2 (the
    scale is the row's max |component| / 127)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, dtype=np.float32)
    scales = np.maximum(peak, np.float32(1e-12)).astype(np.float32) / np.float32(127.0)
    codes = np.rint(vectors / scales[:, None]).astype(np.int8)
    return codes, scales


def vector_code(vector: FloatMatrix | Sequence[float]) -> bytes:
    """A chunk's or window's vector as SQLite stores it (schema 21): its scale (float32, little
    endian) then its ``dim`` int8 codes (:func:`quantize`), ``dim + 4`` bytes."""
    return vector_code_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]


def vector_code_rows(vectors: FloatMatrix) -> list[bytes]:
    """:func:`vector_code` of each row of ``vectors`` (n, dim), quantized at once."""
    codes, scales = quantize(vectors)
    rows = np.empty((len(codes), 4 + codes.shape[1]), dtype=np.uint8)
    rows[:, :4] = scales.astype("<f4").view(np.uint8).reshape(-1, 4)
    rows[:, 4:] = codes.view(np.uint8)
    return [row.tobytes() for row in rows]


def vector_codes(
    blobs: Sequence[bytes], dim: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """The int8 codes (n, dim) and scales (n,) of stored vectors: :func:`vector_code`'s blobs,
    or float32 ones (``4 * dim`` bytes, written before schema 21), quantized as it does."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.int8), np.zeros(0, dtype=np.float32)
    if all(len(blob) == dim + 4 for blob in blobs):
        rows = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), dim + 4)
        scales = rows[:, :4].copy().view("<f4").reshape(-1).astype(np.float32)
        return rows[:, 4:].view(np.int8).copy(), scales
    codes = np.empty((len(blobs), dim), dtype=np.int8)
    scales = np.empty(len(blobs), dtype=np.float32)
    for i, blob in enumerate(blobs):
        if len(blob) == dim + 4:
            scales[i] = np.frombuffer(blob[:4], dtype="<f4")[0]
            codes[i] = np.frombuffer(blob[4:], dtype=np.int8)
        elif len(blob) == 4 * dim:
            row_codes, row_scales = quantize(np.frombuffer(blob, dtype=np.float32).reshape(1, -1))
            codes[i], scales[i] = row_codes[0], row_scales[0]
        else:
            raise ValueError(f"a stored vector of {len(blob)} bytes is not one of dim {dim}")
    return codes, scales


def vectors_from_codes(blobs: Sequence[bytes], dim: int) -> FloatMatrix:
    """Stored vectors (:func:`vector_codes`) as the float32 rows they stand for,
    ``codes * scale``: what the dense arm scores, and what a copy into PostgreSQL writes."""
    codes, scales = vector_codes(blobs, dim)
    return np.asarray(codes.astype(np.float32) * scales[:, None], dtype=np.float32)


def vector_literal(vector: FloatMatrix | Sequence[float]) -> str:
    """pgvector's text form; float32 printed with 9 significant digits round-trips exactly."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(array)):
        raise ValueError("a vector has a NaN or infinite component")
    return "[" + ",".join(f"{x:.9g}" for x in array.tolist()) + "]"


# -- documents and units -------------------------------------------------------------------


def document_row(
    document: ExtractedDocument, owner: str | None = None, visibility: Visibility = "shared"
) -> tuple[Any, ...]:
    """(id, title, path, kind, unit_count, ingested_at, extractor_version, report, toc,
    metadata, owner, visibility, language) of a new document, as both backends insert it."""
    return (
        document.sha256,
        document.title,
        document.path,
        document.kind,
        len(document.units),
        now_iso(),
        document.extractor_version,
        json.dumps(asdict(document.report)),
        json.dumps([asdict(entry) for entry in document.toc]) if document.toc else None,
        json.dumps(document.metadata) if document.metadata else None,
        owner,
        visibility,
        document.language,
    )


def document_info(row: Sequence[Any]) -> DocumentInfo:
    """A document from (id, title, path, kind, unit_count, chunk_count, ingested_at,
    extractor_version, owner, visibility[, holders joined by U+001F, screen flagged[,
    language[, the owner's name]]]), as both backends select it."""
    holders = tuple(sorted(str(row[10]).split("\x1f"))) if len(row) > 10 and row[10] else ()
    return DocumentInfo(
        id=str(row[0]),
        title=str(row[1]),
        path=str(row[2]),
        kind="epub" if row[3] == "epub" else "pdf",
        unit_count=int(str(row[4])),
        chunk_count=int(str(row[5])),
        ingested_at=str(row[6]),
        extractor_version=str(row[7]),
        owner=None if row[8] is None else str(row[8]),
        visibility="private" if row[9] == "private" else "shared",
        holders=holders,
        flagged=bool(row[11]) if len(row) > 11 and row[11] is not None else False,
        language=row[12] if len(row) > 12 and row[12] else None,
        owner_name=str(row[13]) if len(row) > 13 and row[13] is not None else None,
    )


#: The columns of a unit row both backends select (doc_id first when they insert), in the
#: order of :func:`unit_rows` and :func:`unit_from_row`.
UNIT_COLUMNS = "idx, label, href, text, boxes, geometry, html, dom_map, language, text_source, ocr"


def _ocr_json(info: OcrInfo | None) -> str | None:
    return json.dumps(asdict(info)) if info is not None else None


def _ocr_from_json(text: str | None) -> OcrInfo | None:
    if not text:
        return None
    o = json.loads(text)
    return OcrInfo(
        engine=str(o["engine"]),
        languages=str(o["languages"]),
        dpi=float(o["dpi"]),
        mean_confidence=float(o["mean_confidence"]),
        words=int(o["words"]),
        rotation=int(o.get("rotation", 0)),
    )


def unit_rows(document: ExtractedDocument) -> list[tuple[Any, ...]]:
    """(doc_id, ``UNIT_COLUMNS``...) of each unit, as both backends insert them (and
    :func:`unit_from_row` reads them back)."""
    return [
        (
            document.sha256,
            unit.index,
            unit.label,
            unit.href,
            unit.text,
            encode_boxes(unit.text, unit.boxes),
            json.dumps(asdict(unit.geometry)) if unit.geometry else None,
            unit.dom.html if unit.dom else None,
            dom_map_to_json(unit.dom) if unit.dom else None,
            unit.language,
            unit.text_source,
            _ocr_json(unit.ocr),
        )
        for unit in document.units
    ]


def unit_from_row(row: Sequence[Any]) -> Unit:
    """A unit from a row of ``UNIT_COLUMNS``, as both backends select it. Rows written before
    the text source was recorded (NULL) are the PDF's own text, or an EPUB section's."""
    idx, label, href, text, boxes, geometry, html, dom_map, language, source, ocr = row
    page: PageGeometry | None = None
    if geometry:
        g = json.loads(geometry)
        page = PageGeometry(
            mediabox=tuple(g["mediabox"]),
            cropbox=tuple(g["cropbox"]),
            rotation=int(g["rotation"]),
        )
    return Unit(
        index=idx,
        text=text,
        boxes=decode_boxes(bytes(boxes) if boxes is not None else None, text),
        label=label,
        href=href,
        geometry=page,
        dom=dom_map_from_json(dom_map, html) if dom_map and html is not None else None,
        language=language or None,
        text_source="ocr" if source == "ocr" else "epub" if source == "epub" or href else "pdf",
        ocr=_ocr_from_json(ocr),
    )


def title_terms(document: ExtractedDocument) -> str:
    """The full-text terms of the document's title (:mod:`truthbase.text.fulltext`), in the
    document's language."""
    return term_string(document.title, document.language)


def chunk_terms(document: ExtractedDocument, chunk: ChunkDraft) -> str:
    """The full-text terms of a chunk, in its unit's language (else the document's)."""
    language = document.language
    if 0 <= chunk.unit < len(document.units):
        language = document.units[chunk.unit].language or language
    return term_string(chunk.text, language)


def rects_json(rects: Sequence[Rect]) -> str:
    """A chunk's line rects (rounded to 0.001 pt)."""
    return json.dumps([[round(v, 3) for v in rect] for rect in rects])


def rects_from_json(text: str) -> tuple[Rect, ...]:
    return tuple((r[0], r[1], r[2], r[3]) for r in json.loads(text))


def chunks_in_order(rows: Sequence[Sequence[Any]], chunk_ids: Sequence[int]) -> list[Chunk]:
    """Chunks from rows of (id, doc_id, unit, start, end, text, rects, href, kind, context,
    section), in the order of ``chunk_ids`` (ids without a row are left out), as both backends
    select them."""
    by_id = {
        int(row[0]): Chunk(
            id=int(row[0]),
            doc_id=str(row[1]),
            unit=int(row[2]),
            start=int(row[3]),
            end=int(row[4]),
            text=str(row[5]),
            rects=rects_from_json(str(row[6])),
            href=row[7],
            kind="table" if row[8] == "table" else "text",
            context=str(row[9] or ""),
            section=str(row[10] or ""),
        )
        for row in rows
    }
    return [by_id[i] for i in chunk_ids if i in by_id]


def toc_from_json(text: str | None) -> list[TocEntry]:
    """A document's stored table of contents ([] when there is none)."""
    if not text:
        return []
    return [
        TocEntry(
            title=str(e.get("title", "")),
            unit=int(e["unit"]),
            offset=int(e.get("offset", 0)),
            depth=int(e.get("depth", 0)),
            href=str(e.get("href", "")),
        )
        for e in json.loads(text)
    ]


# -- answers ---------------------------------------------------------------------------------


def answer_row(question: str, answer: dict[str, Any]) -> tuple[str, str, str]:
    """(question, answer, created_at) of a new answer."""
    return (question, json.dumps(answer, ensure_ascii=False), now_iso())


def stored_answer(row: Sequence[Any]) -> StoredAnswer:
    """An answer from (id, question, answer, created_at[, asked_by])."""
    asked_by = row[4] if len(row) > 4 else None
    return StoredAnswer(int(row[0]), str(row[1]), json.loads(row[2]), str(row[3]), asked_by)


# -- segments --------------------------------------------------------------------------------


def _parts_json(parts: Sequence[SegmentPart]) -> str:
    return json.dumps([[p.unit, p.start, p.end] for p in parts])


def _parts_from_json(text: str) -> tuple[SegmentPart, ...]:
    return tuple(SegmentPart(int(u), int(s), int(e)) for u, s, e in json.loads(text))


def stored_segments(doc_id: str, rows: Sequence[Sequence[Any]]) -> StoredSegments | None:
    """Rows of (idx, title, parts, summary, written_by, builder, embedder, vector), by idx."""
    if not rows:
        return None
    segments = [
        Segment(
            doc_id=doc_id,
            index=int(r[0]),
            title=str(r[1]),
            parts=_parts_from_json(str(r[2])),
            summary=str(r[3]),
            summarizer=str(r[4]),
        )
        for r in rows
    ]
    blobs = [r[7] for r in rows]
    vectors = None
    if all(b is not None for b in blobs):
        vectors = np.vstack([np.frombuffer(bytes(b), dtype=np.float32) for b in blobs])
    return StoredSegments(
        segments=segments,
        builder=str(rows[0][5]),
        vectors=vectors,
        embedder=str(rows[0][6]) if rows[0][6] is not None else None,
    )


def segment_rows(doc_id: str, summarizer: str, stored: StoredSegments) -> list[tuple[Any, ...]]:
    """The rows ``put_segments`` writes, one per segment (vectors as float32 bytes); ValueError
    for segments that are not ``doc_id``'s in order, or vectors that do not match them."""
    if stored.vectors is not None and len(stored.vectors) != len(stored.segments):
        raise ValueError(
            f"{len(stored.segments)} segments but {len(stored.vectors)} summary vectors"
        )
    rows: list[tuple[Any, ...]] = []
    for i, segment in enumerate(stored.segments):
        if segment.doc_id != doc_id or segment.index != i:
            raise ValueError(
                f"segment {segment.doc_id}:{segment.index} at position {i} of {doc_id}"
            )
        vector = vector_blob(stored.vectors[i]) if stored.vectors is not None else None
        rows.append(
            (
                doc_id,
                summarizer,
                i,
                segment.title,
                _parts_json(segment.parts),
                segment.summary,
                segment.summarizer or summarizer,
                stored.builder,
                stored.embedder,
                vector,
            )
        )
    return rows


def context_terms(document: ExtractedDocument, chunk: ChunkDraft) -> str:
    """The full-text terms of a chunk's ``context`` (not in its span: a table chunk's column
    names, or the caption and column names of the results table whose rows a text chunk holds),
    in its unit's language; "" for a chunk without."""
    if not chunk.context:
        return ""
    return chunk_terms(document, replace(chunk, text=chunk.context))


def section_terms(document: ExtractedDocument, chunk: ChunkDraft) -> str:
    """The full-text terms of a chunk's section path (``ChunkDraft.section``, not in its span),
    in its unit's language; "" for a chunk without."""
    if not chunk.section:
        return ""
    return chunk_terms(document, replace(chunk, text=chunk.section))


def chunk_title_terms(document: ExtractedDocument, chunk: ChunkDraft) -> str:
    """What both backends index as a chunk's title field: the document title's terms, then a
    chunk's context's (column names, a results table's caption: :func:`context_terms`), then
    its section path's (:func:`section_terms`), so they are searched but never part of the
    chunk's text (its span)."""
    return join_terms(
        title_terms(document), context_terms(document, chunk), section_terms(document, chunk)
    )


def join_terms(*parts: str) -> str:
    """Term strings joined into one (empty ones left out): the title field of a chunk."""
    return " ".join(part for part in parts if part)
