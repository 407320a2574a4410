"""`make bench`, embedding section: the embedding limit and ingest's share of it.

The texts are exactly those ingest embeds: :func:`truthbase.ingest.index_document` runs on the
extracted documents with a recording embedder around the bundled one (chunk texts with their
token vectors, then the sentence windows). Then, in the same run:

- the limit: the bundled ONNX session alone on those texts, tokenized beforehand, in batches of
  equal length (no padding, no pooling): real tokens/s and texts/s;
- ingest: index_document's embed stage on the same documents, as tokens/s and its ratio to the
  limit;
- the share of padding tokens in what ingest sent before (fixed batches of 32 longest first)
  and now (:func:`truthbase.embed._onnx.length_batches`);
- the limit with 1 intra-op thread and with onnxruntime's default, to pick the default.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthbase.config import Settings
from truthbase.embed import TokenVectors, Vectors, default_embedder
from truthbase.embed._onnx import DEFAULT_BATCH_SIZE, OnnxEmbedder, length_batches
from truthbase.extract import extract_path
from truthbase.ingest import IngestOptions, StageTimes, index_document, write_document
from truthbase.store import SQLiteStore


class RecordingEmbedder:
    """The bundled embedder, recording every call's texts (what ingest sends)."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(("embed", list(texts)))
        return self.inner.embed(texts)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        self.calls.append(("embed_with_tokens", list(texts)))
        return self.inner.embed_with_tokens(texts)


def _padding_share(lengths: list[list[int]], batches: Any) -> float:
    real = sent = 0
    for call in lengths:
        for rows in batches(call):
            widths = [call[i] for i in rows]
            real += sum(widths)
            sent += max(widths) * len(widths)
    return 1 - real / sent if sent else 0.0


def _fixed_batches(call: list[int]) -> list[list[int]]:
    order = sorted(range(len(call)), key=lambda i: call[i], reverse=True)
    return [order[b : b + DEFAULT_BATCH_SIZE] for b in range(0, len(order), DEFAULT_BATCH_SIZE)]


def limit(embedder: OnnxEmbedder, texts: list[str]) -> dict[str, float]:
    """The session alone on ``texts``: batches of equal length, tokenized beforehand."""
    encodings = embedder._tokenizer.encode_batch(texts)
    lengths = [len(e.ids) for e in encodings]
    feeds = []
    for rows in length_batches(lengths, DEFAULT_BATCH_SIZE, min_fill=1.0):
        ids = np.array([encodings[i].ids for i in rows], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in embedder._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        feeds.append(feed)
    session = embedder._session
    session.run(None, feeds[-1])
    started = time.perf_counter()
    for feed in feeds:
        session.run([embedder._output], feed)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "tokens": sum(lengths),
        "texts": len(texts),
        "tokens_per_s": sum(lengths) / seconds,
        "texts_per_s": len(texts) / seconds,
    }


def bench_embedding(paths: list[Path], settings: Settings) -> dict[str, Any]:
    documents = [extract_path(path) for path in paths]
    embedder = default_embedder()
    recorder = RecordingEmbedder(embedder)
    embed_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "embed.sqlite")
        embedder.embed(["warm up the session"])
        for document in documents:
            times = StageTimes()
            options = IngestOptions.from_settings(settings)
            write_document(
                store, index_document(document, recorder, options, screen=None, times=times)
            )  # type: ignore[arg-type]
            embed_s += times.embed
        store.close()
    sent = [list(dict.fromkeys(texts)) for _, texts in recorder.calls]  # each call dedupes
    lengths = [[len(e.ids) for e in embedder._tokenizer.encode_batch(call)] for call in sent]
    every = [text for call in sent for text in call]
    tokens = sum(sum(call) for call in lengths)
    bound = limit(embedder, every)
    single = limit(
        OnnxEmbedder(embedder.model_path, embedder.tokenizer_path, model_id="t1", threads=1),
        every[:400],
    )
    default = limit(embedder, every[:400])
    return {
        "files": [path.name for path in paths],
        "texts": len(every),
        "tokens": tokens,
        "by_kind": {
            kind: sum(len(t) for k, t in recorder.calls if k == kind)
            for kind in ("embed_with_tokens", "embed")
        },
        "limit": bound,
        "ingest_embed_s": embed_s,
        "ingest_tokens_per_s": tokens / embed_s,
        "ingest_texts_per_s": len(every) / embed_s,
        "ratio_to_limit": (tokens / embed_s) / bound["tokens_per_s"],
        "padding_share_fixed32": _padding_share(lengths, _fixed_batches),
        "padding_share_now": _padding_share(
            lengths, lambda call: length_batches(call, DEFAULT_BATCH_SIZE)
        ),
        "limit_tokens_per_s_by_threads": {
            "1": single["tokens_per_s"],
            "default": default["tokens_per_s"],
        },
    }


_INGEST_CHILD = """
import json, resource, sys, tempfile, time
from pathlib import Path
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.store import SQLiteStore
from truthbase.blas import limit_blas_threads
from truthbase.heap import fix_mmap_threshold
limit_blas_threads()  # as `truthbase ingest` does
fix_mmap_threshold()  # as `truthbase ingest` does
settings = Settings()
with tempfile.TemporaryDirectory() as tmp:
    store = SQLiteStore(Path(tmp) / "ingest.sqlite")
    embedder = load_embedder(settings.embedder)
    started = time.perf_counter()
    options = IngestOptions.from_settings(settings)
    summary = ingest_paths([Path(p) for p in sys.argv[1:]], store, embedder, options)
    seconds = time.perf_counter() - started
    store.close()
print(json.dumps({
    "seconds": seconds,
    "pages": sum(o.pages for o in summary.outcomes),
    "chunks": sum(o.chunks for o in summary.outcomes),
    "embed_s": sum(o.times.embed for o in summary.outcomes),
    "extract_s": sum(o.times.extract for o in summary.outcomes),
    # VmHWM, this process's own peak: ru_maxrss after exec starts at the forking parent's
    "peak_rss_mib": float(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024,
}))
"""


def bench_ingest_process(paths: list[Path]) -> dict[str, Any]:
    """``ingest_paths`` over ``paths`` in a fresh process: its wall time and its own peak RSS."""
    out = subprocess.run(
        [sys.executable, "-c", _INGEST_CHILD, *map(str, paths)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def print_embedding(report: dict[str, Any]) -> None:
    b = report["limit"]
    threads = report["limit_tokens_per_s_by_threads"]
    print(
        f"\nEmbedding ({', '.join(report['files'])}: {report['texts']} texts, "
        f"{report['tokens']} tokens)"
    )
    print(
        f"limit (bundled ONNX session alone, equal-length batches): "
        f"{b['tokens_per_s']:.0f} tokens/s, {b['texts_per_s']:.1f} texts/s"
    )
    print(
        f"ingest embed stage: {report['ingest_tokens_per_s']:.0f} tokens/s, "
        f"{report['ingest_texts_per_s']:.1f} texts/s = "
        f"{100 * report['ratio_to_limit']:.0f}% of the limit (goal >= 90%)"
    )
    print(
        f"padding tokens sent: fixed batches of 32 {100 * report['padding_share_fixed32']:.1f}%, "
        f"now {100 * report['padding_share_now']:.1f}%"
    )
    print(
        f"limit by intra-op threads: 1 thread {threads['1']:.0f} tokens/s, "
        f"onnxruntime's default {threads['default']:.0f} tokens/s"
    )


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    seed = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "seed"
    files = [Path(p) for p in sys.argv[1:]] or [seed / "nist-csf-2.0.pdf"]
    print_embedding(bench_embedding(files, Settings()))
