"""Section paths measured on an index built without them (docs/evals/sections.md).

Copies SOURCE (an SQLite index ingested with ``chunking.section_paths`` off, or before it
existed) to TARGET and gives every stored chunk the section path ingest gives it now
(:func:`truthbase.sections.section_paths` over the stored TOC, else the layout headings of the
stored pages), with its full-text terms; unless ``--fts-only``, the chunks, their sentence
windows and token signs are embedded again with the path, as ingest embeds them. The chunks
themselves stay as they were, so an eval on SOURCE and on TARGET differs by the sections alone.

    python benchmarks/sections_ab.py SOURCE.sqlite TARGET.sqlite [--fts-only]

(Stored pages keep no table rows, so a table row is not kept out of the layout headings here
as ingest keeps it; none of the dev sets' PDFs without an outline has one that looks like one.)
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

import numpy as np

from truthbase.blas import limit_blas_threads
from truthbase.config import EmbedderSettings
from truthbase.embed import Embedder, TokenEmbedder, load_embedder
from truthbase.ingest.embedding import _embed_chunks, _embed_distinct
from truthbase.ingest.windows import embedded_text
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.sections import document_sections, section_paths
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import CHUNK_TEXT
from truthbase.text.fulltext import term_string


def _document(store: SQLiteStore, doc_id: str) -> ExtractedDocument:
    info = store.document(doc_id)
    assert info is not None
    units: list[Unit] = []
    for index in range(info.unit_count):
        unit = store.unit(doc_id, index)
        assert unit is not None
        units.append(unit)
    return ExtractedDocument(
        sha256=doc_id,
        title=info.title,
        path=info.path,
        kind=info.kind,
        units=units,
        extractor_version=info.extractor_version,
        toc=store.document_toc(doc_id),
        language=info.language,
    )


def _sections(db: sqlite3.Connection, document: ExtractedDocument) -> dict[int, str]:
    rows = db.execute(
        f'SELECT c.id, c.unit, c.start, c."end", {CHUNK_TEXT} FROM chunks c '
        "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = ? ORDER BY c.id",
        (document.sha256,),
    ).fetchall()
    drafts = [ChunkDraft(unit=r[1], start=r[2], end=r[3], text=r[4], rects=()) for r in rows]
    paths = section_paths(document_sections(document), drafts)
    for (chunk_id, unit, *_), path in zip(rows, paths, strict=True):
        language = document.units[unit].language or document.language
        db.execute(
            "UPDATE chunks SET section = ?, section_terms = ? WHERE id = ?",
            (path, term_string(path, language) if path else "", chunk_id),
        )
    return {row[0]: path for row, path in zip(rows, paths, strict=True)}


def _embed_again(
    db: sqlite3.Connection, embedder: Embedder, document: ExtractedDocument, paths: dict[int, str]
) -> int:
    """The document's chunk and window vectors (and token signs) made again with the paths."""
    chunks = db.execute(
        f"SELECT c.id, c.unit, {CHUNK_TEXT}, c.context FROM chunks c "
        "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = ? ORDER BY c.id",
        (document.sha256,),
    ).fetchall()
    inputs = [embedded_text(document.title, paths[c[0]], c[3], c[2]) for c in chunks]
    if isinstance(embedder, TokenEmbedder):
        vectors, signs = _embed_chunks(embedder, inputs)
    else:
        vectors, signs = _embed_distinct(embedder, inputs), None
    for (chunk_id, *_), vector in zip(chunks, vectors, strict=True):
        db.execute(
            "UPDATE chunks SET vector = ? WHERE id = ?",
            (np.asarray(vector, np.float32).tobytes(), chunk_id),
        )
    if signs is not None:
        for (chunk_id, *_), packed in zip(chunks, signs, strict=True):
            db.execute("UPDATE chunk_tokens SET signs = ? WHERE chunk_id = ?", (packed, chunk_id))
    by_id = {c[0]: c for c in chunks}
    windows = db.execute(
        'SELECT w.id, w.chunk_id, w.start, w."end" FROM windows w JOIN chunks c '
        "ON c.id = w.chunk_id WHERE c.doc_id = ? ORDER BY w.id",
        (document.sha256,),
    ).fetchall()
    window_inputs = [
        embedded_text(
            document.title,
            paths[chunk_id],
            by_id[chunk_id][3],
            document.units[by_id[chunk_id][1]].text[start:end],
        )
        for _, chunk_id, start, end in windows
    ]
    window_vectors = _embed_distinct(embedder, window_inputs)
    for (window_id, *_), vector in zip(windows, window_vectors, strict=True):
        db.execute(
            "UPDATE windows SET vector = ? WHERE id = ?",
            (np.asarray(vector, np.float32).tobytes(), window_id),
        )
    return len(chunks) + len(windows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--fts-only", action="store_true", help="Leave the vectors as they are.")
    args = parser.parse_args()
    limit_blas_threads()
    with sqlite3.connect(args.source) as source, sqlite3.connect(args.target) as target:
        source.backup(target)
    SQLiteStore(args.target).close()  # brings the copy to this schema version
    store = SQLiteStore(args.target)
    embedder = None if args.fts_only else load_embedder(EmbedderSettings())
    db = sqlite3.connect(args.target)
    try:
        for info in store.list_documents():
            started = time.perf_counter()
            document = _document(store, info.id)
            paths = _sections(db, document)
            embedded = 0 if embedder is None else _embed_again(db, embedder, document, paths)
            db.commit()
            named = sum(1 for path in paths.values() if path)
            print(
                f"{info.title[:50]}: {named}/{len(paths)} chunks with a section, "
                f"{embedded} texts embedded, {time.perf_counter() - started:.0f} s",
                flush=True,
            )
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
        db.commit()
    finally:
        db.close()
        store.close()


if __name__ == "__main__":
    main()
