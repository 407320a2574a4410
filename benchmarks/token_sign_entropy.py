"""How far a lossless code could shrink the token signs of late interaction (issue 28, item 4).

Each chunk token is stored as the signs of its 384 dimensions (``chunk_tokens.signs``, 48 bytes
a token: half or more of an index's bytes). A lossless code keeps every eval number by
construction, so the question is how many bits a sign really carries. This study measures, on
the stored signs of one or more indexes, the ideal code length (bits a sign) under four models:

- ``marginal``: each dimension's own rate of ones over the index;
- ``previous token``: conditioned on the same dimension of the token before it in the chunk;
- ``word piece, same index``: conditioned on the word piece the row stands for (the rates of
  ones of each (piece, dimension) over the index itself: an optimistic, in-sample bound);
- ``word piece, other index``: the same rates fitted on the *other* index (a table a code would
  have to ship or build before it has seen the documents it codes), smoothed towards the
  dimension's marginal rate.

Rows are aligned with their word pieces by tokenizing what ingest embedded for each chunk
(:func:`truthbase.ingest.backfill.chunk_inputs`) with the embedder's tokenizer; a chunk whose
piece count differs from its stored row count is left out and counted.

    PYTHONPATH=src .venv/bin/python benchmarks/token_sign_entropy.py --db A.sqlite --db B.sqlite \
        [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from truthbase.config import Settings  # noqa: E402
from truthbase.embed import load_embedder  # noqa: E402
from truthbase.ingest.backfill import chunk_inputs  # noqa: E402
from truthbase.store import open_store  # noqa: E402

DIM = 384
#: Pseudo-count of a (piece, dimension) rate towards the dimension's marginal rate.
SMOOTHING = 2.0
#: Rows scored at a time (the unpacked bits of a library are gigabytes).
BLOCK = 200_000


class Signs:
    """One index's token signs, unpacked (rows x 384 of 0/1), with each row's word piece id and
    the position of each chunk's first row."""

    def __init__(self, db: Path) -> None:
        settings = Settings()
        store = open_store(db)
        tokenizer = load_embedder(settings.embedder)._tokenizer  # type: ignore[attr-defined]
        uri = f"file:{db}?mode=ro"
        ids = [r[0] for r in sqlite3.connect(uri, uri=True).execute("SELECT id FROM chunks")]
        stored = store.token_signs(ids)
        titles: dict[str, str] = {}
        bits: list[npt.NDArray[np.uint8]] = []
        pieces: list[npt.NDArray[np.int64]] = []
        self.mismatched = 0
        for lo in range(0, len(ids), 256):
            chunks = store.chunks(ids[lo : lo + 256])
            for c in chunks:
                if c.doc_id not in titles:
                    titles[c.doc_id] = store.document(c.doc_id).title
            texts = chunk_inputs(chunks, titles, settings.chunking.title_context)
            for chunk, encoding in zip(chunks, tokenizer.encode_batch(texts), strict=True):
                blob = stored.get(chunk.id)
                if blob is None:
                    continue
                rows = np.unpackbits(
                    np.frombuffer(blob, dtype=np.uint8).reshape(-1, DIM // 8), axis=1
                )
                kept = [
                    i
                    for i, s in zip(encoding.ids, encoding.special_tokens_mask, strict=True)
                    if not s
                ]
                if len(kept) != rows.shape[0]:
                    self.mismatched += 1
                    continue
                bits.append(rows)
                pieces.append(np.asarray(kept, dtype=np.int64))
        self.chunks = len(bits)
        self.starts = np.cumsum([0] + [len(p) for p in pieces])[:-1]
        self.bits = np.concatenate(bits)
        self.pieces = np.concatenate(pieces)

    def piece_rates(self, vocabulary: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Ones per (piece, dimension) and rows per piece."""
        ones = np.zeros((vocabulary, DIM), dtype=np.int64)
        for lo in range(0, len(self.pieces), BLOCK):
            np.add.at(ones, self.pieces[lo : lo + BLOCK], self.bits[lo : lo + BLOCK])
        return ones, np.bincount(self.pieces, minlength=vocabulary)


def _entropy(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.asarray(-(p * np.log2(p) + (1 - p) * np.log2(1 - p)))


def marginal_bits(signs: Signs) -> float:
    return float(_entropy(signs.bits.mean(axis=0, dtype=np.float64)).mean())


def previous_token_bits(signs: Signs) -> float:
    """H(sign | the same dimension of the token before it in the chunk), per sign."""
    later = np.ones(len(signs.pieces), dtype=bool)
    later[signs.starts] = False
    cur = signs.bits[later]
    prev = signs.bits[np.nonzero(later)[0] - 1]
    total = np.zeros(DIM)
    for before in (0, 1):
        given = prev == before
        n = given.sum(axis=0)
        ones = (cur & given).sum(axis=0)
        total += n / len(cur) * _entropy(ones / np.maximum(n, 1))
    return float(total.mean())


def piece_bits(
    signs: Signs, ones: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> tuple[float, float]:
    """Ideal code length (bits a sign) of ``signs`` under the (piece, dimension) rates
    ``ones / rows``, smoothed towards their marginal rates; and the share of signs that differ
    from their piece's majority sign."""
    marginal = ones.sum(axis=0) / max(int(rows.sum()), 1)
    length = 0.0
    flips = 0
    for lo in range(0, len(signs.pieces), BLOCK):
        piece = signs.pieces[lo : lo + BLOCK]
        b = signs.bits[lo : lo + BLOCK].astype(np.float64)
        p = (ones[piece] + SMOOTHING * marginal) / (rows[piece][:, None] + SMOOTHING)
        p = np.clip(p, 1e-4, 1 - 1e-4)
        length += float(-(b * np.log2(p) + (1 - b) * np.log2(1 - p)).sum())
        flips += int(((p > 0.5) != (b > 0.5)).sum())
    return length / signs.bits.size, flips / signs.bits.size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db",
        type=Path,
        action="append",
        required=True,
        help="an index (twice or more for the cross-index model)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    vocabulary = load_embedder(Settings().embedder)._tokenizer.get_vocab_size()  # type: ignore[attr-defined]
    indexes = [Signs(db) for db in args.db]
    rates = [s.piece_rates(vocabulary) for s in indexes]
    report: dict[str, Any] = {}
    for k, (db, signs) in enumerate(zip(args.db, indexes, strict=True)):
        same = piece_bits(signs, *rates[k])
        figures: dict[str, Any] = {
            "chunks": signs.chunks,
            "rows": len(signs.pieces),
            "mismatched_chunks": signs.mismatched,
            "marginal_bits": marginal_bits(signs),
            "previous_token_bits": previous_token_bits(signs),
            "piece_same_index_bits": same[0],
            "piece_same_index_flips": same[1],
        }
        for j, other in enumerate(args.db):
            if j != k:
                bits, flips = piece_bits(signs, *rates[j])
                figures[f"piece_from_{other.name}_bits"] = bits
                figures[f"piece_from_{other.name}_flips"] = flips
        report[str(db)] = figures
        print(db, json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
