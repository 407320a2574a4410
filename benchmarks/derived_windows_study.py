"""Study (issue 16 item 3): can the sentence windows' vectors come from the chunk pass?

Windows are about half of the tokens ingest embeds. This rewrites, in a COPY of an index, each
window's vector as the mean of the chunk pass's hidden states over the window's word pieces
(``window``), with the chunk input's title/context prefix pieces too (``window+prefix``), or with
the special tokens (``window+special``), L2-normalized; then `truthbase eval retrieval` on the
copy tells what the derived windows cost. Result (docs/evals/embed-memory-search.md, session 7):
every variant loses hybrid Recall@8 on dev.json (0.875 -> 0.839 / 0.821 / 0.839), so windows
stay embedded on their own.

    cp INDEX.sqlite /tmp/copy.sqlite
    PYTHONPATH=src .venv/bin/python benchmarks/derived_windows_study.py /tmp/copy.sqlite window
    PYTHONPATH=src .venv/bin/truthbase --db /tmp/copy.sqlite eval retrieval \
        --golden ../shared/golden/dev.json
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import numpy as np

from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.embed._onnx import OnnxEmbedder, l2_normalize
from truthbase.ingest.windows import context_text, with_context
from truthbase.store.sqlite import CHUNK_TEXT

MODES = ("window", "window+prefix", "window+special")
BATCH = 16


def derive(db: Path, mode: str) -> tuple[int, int]:
    """Rewrite the windows' vectors of ``db`` in place: (windows derived, left as they were)."""
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    if not isinstance(embedder, OnnxEmbedder):
        raise SystemExit("the study needs the bundled ONNX embedder (its hidden states)")
    conn = sqlite3.connect(db)
    titles = dict(conn.execute("SELECT id, title FROM documents"))
    windows: dict[int, list[tuple[int, int, int]]] = {}
    for window_id, chunk_id, start, end in conn.execute(
        'SELECT id, chunk_id, start, "end" FROM windows'
    ):
        windows.setdefault(chunk_id, []).append((window_id, start, end))
    chunks = [
        row
        for row in conn.execute(
            f'SELECT c.id, c.doc_id, c.start, c."end", {CHUNK_TEXT}, c.context FROM chunks c '
            "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit"
        )
        if row[0] in windows
    ]
    updates: list[tuple[bytes, int]] = []
    kept = 0
    for b in range(0, len(chunks), BATCH):
        batch = chunks[b : b + BATCH]
        inputs = [
            context_text(titles[doc] if settings.chunking.title_context else "", with_context(c, t))
            for _, doc, _, _, t, c in batch
        ]
        encodings = embedder._tokenizer.encode_batch(inputs)
        hidden, _ = embedder._run(encodings)
        for row, ((chunk_id, _, c_start, _, text, _), enc, inp) in enumerate(
            zip(batch, encodings, inputs, strict=True)
        ):
            prefix = len(inp) - len(text)
            pieces = list(enumerate(zip(enc.offsets, enc.special_tokens_mask, strict=True)))
            for window_id, start, end in windows[chunk_id]:
                a, z = prefix + start - c_start, prefix + end - c_start
                keep = [i for i, ((o0, o1), sp) in pieces if not sp and o1 > a and o0 < z]
                if mode == "window+prefix":
                    keep += [i for i, ((_, o1), sp) in pieces if not sp and o1 <= prefix]
                if mode == "window+special":
                    keep += [i for i, (_, sp) in pieces if sp and enc.attention_mask[i]]
                if not keep:  # the window lies past the chunk's truncation
                    kept += 1
                    continue
                vector = l2_normalize(hidden[row, keep].mean(axis=0, keepdims=True))[0]
                updates.append((vector.astype(np.float32).tobytes(), window_id))
    conn.executemany("UPDATE windows SET vector = ? WHERE id = ?", updates)
    conn.commit()
    conn.close()
    return len(updates), kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path, help="a COPY of an index: its windows are rewritten")
    parser.add_argument("mode", choices=MODES)
    args = parser.parse_args()
    derived, kept = derive(args.db, args.mode)
    print(f"windows derived {derived}, left as embedded {kept}")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
