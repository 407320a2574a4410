"""Fit the token projection of ``truthbase.embed.token_code`` (``data/minilm-pca128.npy``).

The projection is fitted on token vectors of documents that no golden set asks about: the
robustness PDFs of ../shared/corpus/robustness less the five that capabilities-dev.json uses
(ocrmypdf-linn, ocrmypdf-multipage, pypdf-GeoTopo-komprimiert, pdfplumber-ca-warn-report,
pdfplumber-issue-67-example). Ingest them into an index of their own, then fit:

    ls ../shared/corpus/robustness/*.pdf | grep -v -e linn -e multipage -e GeoTopo \\
        -e ca-warn -e issue-67 | xargs truthbase --db /tmp/neutral.sqlite ingest
    .venv/bin/python scripts/fit_token_code.py --db /tmp/neutral.sqlite \\
        --out src/truthbase/embed/data/minilm-pca128.npy

Each chunk is embedded again exactly as ingest embeds it (the backfill's inputs, with its
title), its stored token rows are kept (``chunking.punctuation_tokens``), and the mean and the
top principal directions of all rows (float64 covariance) are written as one float32 array:
row 0 the mean, then the directions, largest variance first. Print the name to put in
``PCA_CODE`` (the file's sha256).
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
from pathlib import Path

import numpy as np

from truthbase.config import Settings
from truthbase.embed import TokenEmbedder, load_embedder
from truthbase.ingest.backfill import chunk_inputs
from truthbase.ingest.embedding import stored_rows
from truthbase.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="the SQLite index to read")
    parser.add_argument("--bits", type=int, default=128, help="principal directions kept")
    parser.add_argument("--out", type=Path, required=True, help="the .npy file to write")
    args = parser.parse_args()
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    if not isinstance(embedder, TokenEmbedder):
        raise SystemExit("the embedder has no token vectors")
    store = open_store(args.db)
    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    titles: dict[str, str] = {}
    rows: list[np.ndarray] = []
    for lo in range(0, len(ids), 64):
        chunks = store.chunks(ids[lo : lo + 64])
        for chunk in chunks:
            if chunk.doc_id not in titles:
                info = store.document(chunk.doc_id)
                titles[chunk.doc_id] = info.title if info is not None else ""
        _, tokens = embedder.embed_with_tokens(
            chunk_inputs(chunks, titles, settings.chunking.title_context)
        )
        assert tokens is not None
        rows += [
            stored_rows(t, settings.chunking.punctuation_tokens) for t in tokens if len(t.tokens)
        ]
    vectors = np.concatenate(rows).astype(np.float64)
    mean = vectors.mean(axis=0)
    values, directions = np.linalg.eigh(np.cov((vectors - mean).T))
    order = np.argsort(values)[::-1][: args.bits]
    kept = float(values[order].sum() / values.sum())
    out = np.vstack([mean, directions[:, order].T]).astype(np.float32)
    np.save(args.out, out, allow_pickle=False)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:12]
    print(
        f"{len(ids)} chunks, {len(vectors)} token rows; {args.bits} directions keep "
        f"{kept:.3f} of the variance; wrote {args.out}: PCA_CODE = 'pca{args.bits}:{digest}'"
    )


if __name__ == "__main__":
    main()
