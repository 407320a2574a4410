"""A long document is embedded a batch of chunks at a time and written in its one transaction
(issue 28 item 3), on both backends: the rows are those of the whole document written at once,
byte for byte; batches made inside the store's transaction (``add_document`` given them lazily)
that fail, or whose process is killed, in the middle leave nothing of the document (and the store
takes it afterwards); ``write_document`` embeds them before it takes the write lock."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.corpus import SEED
from tests.helpers.pg_server import Backend
from truthbase.embed import TokenVectors, Vectors
from truthbase.embed._fake import HashingEmbedder
from truthbase.extract import extract_pdf
from truthbase.ingest import IngestOptions, index_document, write_document
from truthbase.model import ExtractedDocument

pytestmark = pytest.mark.corpus

RAPTOR = SEED / "raptor.pdf"
ROOT = Path(__file__).resolve().parents[2]


class TokenHashing(HashingEmbedder):
    """The hashing embedder with token vectors (one row per word, from the word's hash), so the
    token signs are written too; ``fail_at``: the call that raises."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__(dim=32)
        self.calls = 0
        self.fail_at = fail_at

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise RuntimeError("embedder failed mid-document")
        return super().embed(texts)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        vectors = self.embed(texts)
        tokens = []
        for text in texts:
            words = tuple(text.split()[:40]) or ("",)
            rows = super().embed(list(words))
            tokens.append(TokenVectors(vectors=rows, tokens=words))
        return vectors, tokens


@cache
def raptor() -> ExtractedDocument:
    return extract_pdf(RAPTOR)


@pytest.fixture(params=("sqlite", "postgres"))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def backends(kind: str, tmp_path: Path) -> Iterator[tuple[Backend, Backend]]:
    pair = (Backend(kind, tmp_path / "a"), Backend(kind, tmp_path / "b"))
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    yield pair
    for backend in pair:
        backend.drop()


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def _rows(backend: Backend) -> list[str]:
    """Every row of the store, the document's ingest time left out (the two writes differ)."""
    return [_TIMESTAMP.sub("<time>", line) for line in backend.dump()]


def _write(
    backend: Backend, batch_chunks: int | None, embedder: Any = None, *, lazy: bool = False
) -> Any:
    """Index raptor.pdf and write it: by ``write_document``, or (``lazy``) by giving the store
    the batches to embed inside its transaction."""
    store = backend.open()
    try:
        indexed = index_document(
            raptor(),
            embedder or TokenHashing(),
            IngestOptions(),
            screen=None,
            batch_chunks=batch_chunks,
        )
        if lazy:
            store.add_document(indexed)
        else:
            write_document(store, indexed)
        return store.counts()
    finally:
        store.close()


def test_batches_write_the_rows_of_the_whole_document(backends: tuple[Backend, Backend]) -> None:
    whole, batched = backends
    counts = _write(whole, None)
    assert counts["chunks"] > 3 * 7 and counts["token_chunks"] == counts["chunks"]
    assert _write(batched, 7) == counts  # raptor's ~124 chunks in batches of 7
    assert _rows(batched) == _rows(whole)


def test_batches_embedded_inside_the_transaction_write_the_same_rows(
    kind: str, backends: tuple[Backend, Backend], tmp_path: Path
) -> None:
    whole, lazy = backends
    counts = _write(whole, None)
    assert _write(lazy, 7, lazy=True) == counts
    assert _rows(lazy) == _rows(whole)


def test_an_error_in_a_later_batch_leaves_nothing(backends: tuple[Backend, Backend]) -> None:
    backend, _ = backends
    backend.open().close()  # the schema, no document
    empty = _rows(backend)
    # Each batch of 7 chunks is 2+ embedder calls: the 6th call is in the third batch, after
    # two batches were written inside the transaction.
    with pytest.raises(RuntimeError, match="mid-document"):
        _write(backend, 7, TokenHashing(fail_at=6), lazy=True)
    assert _rows(backend) == empty
    store = backend.open()
    try:
        assert not store.has_document(raptor().sha256)
    finally:
        store.close()
    assert _write(backend, 7)["chunks"] > 0  # and the document is taken afterwards


_KILLED_CHILD = r"""
import sys, time
from pathlib import Path
from tests.integration.test_ingest_batches import TokenHashing, raptor
from truthbase.ingest import IngestOptions, index_document, write_document
from truthbase.store import SQLiteStore
from truthbase.store.postgres import PostgresStore

class Stalling(TokenHashing):
    def embed(self, texts):
        if self.calls == 5:  # two batches written: say so, and wait to be killed
            Path(sys.argv[2]).write_text("written")
            time.sleep(120)
        return super().embed(texts)

kind, location = sys.argv[1], sys.argv[3]
store = SQLiteStore(Path(location)) if kind == "sqlite" else PostgresStore(location)
indexed = index_document(raptor(), Stalling(), IngestOptions(), screen=None, batch_chunks=7)
store.add_document(indexed)  # the batches embedded inside the transaction
"""


def test_a_writer_killed_between_batches_leaves_nothing(
    kind: str, backends: tuple[Backend, Backend], tmp_path: Path
) -> None:
    backend, _ = backends
    backend.open().close()  # the schema, no document
    empty = _rows(backend)
    marker = tmp_path / "written"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_CHILD, kind, str(marker), backend.location],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 240
    while not marker.exists():
        if child.poll() is not None:
            raise AssertionError(child.communicate()[1].decode())
        assert time.monotonic() < deadline, "the writer never reached its third batch"
        time.sleep(0.1)
    child.send_signal(signal.SIGKILL)
    child.communicate()  # reaped, its pipes closed
    if kind == "postgres":
        time.sleep(1.0)  # the server notices the lost connection and rolls back
    assert _rows(backend) == empty
    assert _write(backend, 7)["chunks"] > 0


def test_the_batches_embed_the_same_texts_as_one_call() -> None:
    """The batches' vectors are those of the whole document: each text's vector is its own."""
    whole = index_document(raptor(), TokenHashing(), IngestOptions(), screen=None)
    batched = index_document(raptor(), TokenHashing(), IngestOptions(), screen=None, batch_chunks=9)
    assert batched.batches is not None and not batched.chunks
    batches = list(batched.batches)
    assert len(batches) == -(-len(whole.chunks) // 9)
    assert [c for b in batches for c in b.chunks] == list(whole.chunks)
    np.testing.assert_array_equal(np.concatenate([b.vectors for b in batches]), whole.vectors)
    assert whole.window_vectors is not None
    np.testing.assert_array_equal(
        np.concatenate([b.window_vectors for b in batches if b.window_vectors is not None]),
        whole.window_vectors,
    )
    digest = hashlib.sha256(b"".join(s for b in batches for s in b.token_signs or ()))
    assert digest.digest() == hashlib.sha256(b"".join(whole.token_signs or ())).digest()


def test_write_document_embeds_before_it_takes_the_write_lock(tmp_path: Path) -> None:
    """Another writer of the same SQLite index is not kept waiting (30 s, then refused) while a
    long document is embedded: its batches are spooled before the transaction opens."""
    from truthbase.store import SQLiteStore

    db = tmp_path / "l.sqlite"
    store, other = SQLiteStore(db), SQLiteStore(db)
    answered: list[float] = []

    class Meanwhile(TokenHashing):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if self.calls == 5:  # mid-document: another writer writes
                started = time.monotonic()
                other.add_answer("meanwhile?", {"answer": "yes"})
                answered.append(time.monotonic() - started)
            return super().embed(texts)

    try:
        indexed = index_document(
            raptor(), Meanwhile(), IngestOptions(), screen=None, batch_chunks=7
        )
        write_document(store, indexed)
        assert answered and answered[0] < 5.0, answered
        assert store.has_document(raptor().sha256) and len(store.answers()) == 1
    finally:
        store.close()
        other.close()
