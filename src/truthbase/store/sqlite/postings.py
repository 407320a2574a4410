"""The full-text arm from postings held in memory, for large indexes: FTS5's bm25() to the bit,
without FTS5's cost per matching chunk.

FTS5 ranks an OR query by scoring every chunk that holds any of its terms: for each it reads
the row's size from its ``%_docsize`` table and decodes the row's positions. A question's common
words match a growing share of a growing index (6% of the 22k-chunk library for a median
dev.json question), so that arm grew with the index and was the largest stage of a search at
145k chunks (docs/evals/scale-search.md). Above ``sqlite.fts_postings_min_rows`` chunks the
arm is computed here instead, from what one pass over the full-text rows leaves in memory, per
index generation as the vectors are (:class:`PostingsCache`):

- each term's postings per column (title, text): the rows holding it and how often;
- each row's tokens in order per column (a phrase, "gv oc 03", counts only where its tokens are
  adjacent) and its length;
- FTS5's own row count and token total (its averages record), so the average length is FTS5's.

A query is then a few array operations over its terms' postings. The score is bm25() as
fts5_aux.c computes it: k1 1.2, b 0.75; idf = ln((N - df + 0.5) / (df + 0.5)), 1e-6 when not
positive, df the rows the phrase matches (in the columns searched); a phrase's frequency in a
row is the sum of its column's weight over its instances, title first. The operations are FTS5's
in FTS5's order, so each score equals bm25()'s, bit for bit, and the arm ranks as FTS5 did
(tests/integration/test_sqlite_postings.py compares the two); ties go to the lower chunk id.
Expressions not written by the query builder (:func:`truthbase.store.phrases.or_of_phrases`)
are left to FTS5.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ...records import ArmHit
from ..background import BackgroundValue
from ..base import StoreError
from ..phrases import ascii_tokens
from .connection import Database

__all__ = ["Postings", "PostingsCache", "load_postings", "postings_search"]

#: fts5_aux.c's bm25() constants.
K1 = 1.2
B = 0.75

#: Rows read and tokenized at once while the postings are built.
LOAD_BLOCK = 4_096

#: -1 tokens after the last row (every row already ends with one): a phrase's window that runs
#: past a row reads -1 and matches nothing; past the array's end it reads the last one.
PHRASE_PAD = 32

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

TITLE, TEXT = 0, 1


@dataclass(frozen=True, slots=True)
class Column:
    """One full-text column: postings sorted by (term, row) and the rows' tokens in order."""

    rows: npt.NDArray[np.int32]  # postings: the row of each (term, row) pair
    counts: npt.NDArray[np.int32]  # how often the term occurs in that row
    starts: Ints  # (terms + 1,): the postings of term t are starts[t]:starts[t + 1]
    # every row's token ids in order, each row followed by -1 (no phrase spans two rows), and
    # PHRASE_PAD more -1 at the end
    tokens: npt.NDArray[np.int32]
    offsets: Ints  # (rows,): where each row's tokens begin in ``tokens``
    positions: npt.NDArray[np.int32]  # every token's position in ``tokens``, by (term, position)
    position_starts: Ints  # (terms + 1,): term t's positions are positions[ps[t]:ps[t + 1]]

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        lo, hi = int(self.starts[term]), int(self.starts[term + 1])
        return self.rows[lo:hi], self.counts[lo:hi]

    def places(self, term: int) -> npt.NDArray[np.int32]:
        return self.positions[int(self.position_starts[term]) : int(self.position_starts[term + 1])]


@dataclass(frozen=True, slots=True)
class Postings:
    """The full-text index of one generation in memory (row r is chunk ``chunk_ids[r]``)."""

    vocabulary: dict[str, int]
    chunk_ids: Ints  # ascending
    docs: npt.NDArray[np.int32]  # (rows,): index into doc_names
    doc_names: dict[str, int]
    columns: tuple[Column, Column]  # title, text
    norms: Floats  # (rows,): k1 * (1 - b + b * length / average length), as bm25() has it
    row_count: int  # FTS5's N

    @property
    def nbytes(self) -> int:
        arrays: list[npt.NDArray[np.generic]] = [self.chunk_ids, self.docs, self.norms]
        for column in self.columns:
            arrays += [column.rows, column.counts, column.starts, column.tokens, column.offsets]
            arrays += [column.positions, column.position_starts]
        return sum(a.nbytes for a in arrays)


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint (FTS5's averages record is written with it) at ``at``: value, next."""
    value = 0
    for _ in range(8):
        byte = blob[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at
    return (value << 8) | blob[at], at + 1


def _averages(db: Database) -> tuple[int, int]:
    """FTS5's row count and token total over both columns (its averages record, id 1)."""
    row = db.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    blob = bytes(row[0])
    count, at = _varint(blob, 0)
    total = 0
    for _ in range(2):
        size, at = _varint(blob, at)
        total += size
    return count, total


@dataclass(slots=True)
class _ColumnParts:
    """One column's pieces, block by block, while the postings are read."""

    terms: list[npt.NDArray[np.int32]] = field(default_factory=list)  # per (term, row) pair
    rows: list[npt.NDArray[np.int32]] = field(default_factory=list)
    counts: list[npt.NDArray[np.int32]] = field(default_factory=list)
    tokens: list[npt.NDArray[np.int32]] = field(default_factory=list)  # with the -1 after rows
    sizes: list[Ints] = field(default_factory=list)

    def add(self, ids: npt.NDArray[np.int32], size: Ints, first_row: int) -> None:
        """A block's rows, from ``first_row``: their token ids, one row after another."""
        owner = np.repeat(np.arange(len(size), dtype=np.int64), size)
        pairs, count = np.unique(ids.astype(np.int64) * len(size) + owner, return_counts=True)
        self.terms.append((pairs // len(size)).astype(np.int32))
        self.rows.append((pairs % len(size) + first_row).astype(np.int32))
        self.counts.append(count.astype(np.int32))
        tokens = np.full(len(ids) + len(size), -1, dtype=np.int32)
        tokens[np.arange(len(ids)) + owner] = ids
        self.tokens.append(tokens)
        self.sizes.append(size)

    def column(self, terms: int) -> Column:
        # Blocks come in row order and each is sorted by (term, row): a stable sort by term
        # alone leaves each term's rows ascending.
        term = np.concatenate(self.terms) if self.terms else np.zeros(0, np.int32)
        order = np.argsort(term, kind="stable")
        rows = (np.concatenate(self.rows) if self.rows else term)[order]
        counts = (np.concatenate(self.counts) if self.counts else term)[order]
        del order
        starts = _starts(term, terms)
        del term
        tokens = np.concatenate([*self.tokens, np.full(PHRASE_PAD, -1, np.int32)])
        size = np.concatenate(self.sizes) if self.sizes else np.zeros(0, np.int64)
        offsets = np.zeros(len(size), dtype=np.int64)
        np.cumsum(size[:-1] + 1, out=offsets[1:])
        self.terms, self.rows, self.counts, self.tokens = [], [], [], []
        by_term = np.argsort(tokens, kind="stable")[int((tokens < 0).sum()) :]  # -1 first
        return Column(
            rows=rows,
            counts=counts,
            starts=starts,
            tokens=tokens,
            offsets=offsets,
            positions=by_term.astype(np.int32),
            position_starts=_starts(tokens[tokens >= 0], terms),
        )


def _starts(term: npt.NDArray[np.int32], terms: int) -> Ints:
    """Where each term's entries begin in an array sorted by term (terms + 1 offsets)."""
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=terms), out=starts[1:])
    return starts


class IndexMoved(StoreError):
    """A write changed the chunks while their postings were read: not this generation's."""


def load_postings(db: Database) -> Postings:
    """One pass over the full-text rows (FTS5's content view, in chunk order)."""
    rows = int(db.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    vocabulary: dict[str, int] = {}
    chunk_ids = np.empty(rows, dtype=np.int64)
    docs = np.empty(rows, dtype=np.int32)
    doc_names: dict[str, int] = {}
    lengths = np.zeros(rows, dtype=np.int64)
    parts = (_ColumnParts(), _ColumnParts())
    cursor = db.conn.execute(
        "SELECT f.id, c.doc_id, f.title, f.text FROM chunks_fts_content f "
        "JOIN chunks c ON c.id = f.id ORDER BY f.id"
    )
    done = 0
    while block := cursor.fetchmany(LOAD_BLOCK):
        if done + len(block) > rows:  # a write between the count and the read
            raise IndexMoved
        for k, (chunk_id, doc_id, *_) in enumerate(block):
            chunk_ids[done + k] = chunk_id
            docs[done + k] = doc_names.setdefault(doc_id, len(doc_names))
        for column in (TITLE, TEXT):
            tokens = [ascii_tokens(r[2 + column] or "") for r in block]
            size = np.fromiter(map(len, tokens), dtype=np.int64, count=len(block))
            ids = np.fromiter(
                (vocabulary.setdefault(t, len(vocabulary)) for ts in tokens for t in ts),
                dtype=np.int32,
                count=int(size.sum()),
            )
            lengths[done : done + len(block)] += size
            parts[column].add(ids, size, done)
        done += len(block)
    if done != rows:
        raise IndexMoved
    row_count, total = _averages(db)
    average = float(total) / float(row_count) if row_count else 1.0
    norms = K1 * (1 - B + B * lengths.astype(np.float64) / average)
    return Postings(
        vocabulary=vocabulary,
        chunk_ids=chunk_ids,
        docs=docs,
        doc_names=doc_names,
        columns=(parts[TITLE].column(len(vocabulary)), parts[TEXT].column(len(vocabulary))),
        norms=norms,
        row_count=row_count,
    )


def _phrase_counts(column: Column, ids: Sequence[int]) -> tuple[Ints, Ints]:
    """The rows where the tokens ``ids`` occur adjacent and in order in ``column``, and how
    often (overlapping instances each count, as FTS5's do). A phrase is found from the
    positions of its rarest token."""
    if len(ids) == 1:
        single, often = column.postings(ids[0])
        return single.astype(np.int64), often.astype(np.int64)
    tokens = list(ids)
    anchor = min(range(len(tokens)), key=lambda k: len(column.places(tokens[k])))
    start = column.places(tokens[anchor]).astype(np.int64) - anchor
    start = start[start >= 0]
    last = len(column.tokens) - 1  # a -1
    for k, term in enumerate(tokens):
        if k != anchor and len(start):
            start = start[column.tokens[np.minimum(start + k, last)] == term]
    if not len(start):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    found, counts = np.unique(
        np.searchsorted(column.offsets, start, side="right") - 1, return_counts=True
    )
    return found.astype(np.int64), counts.astype(np.int64)


def _frequencies(
    postings: Postings, ids: Sequence[int], title_weight: float
) -> tuple[Ints, Floats]:
    """The rows a phrase matches in the columns searched and its weighted frequency in each,
    summed as bm25() sums it: the column's weight once per instance, title instances first."""
    text_rows, text_counts = _phrase_counts(postings.columns[TEXT], ids)
    if title_weight <= 0:
        return text_rows, text_counts.astype(np.float64)
    title_rows, title_counts = _phrase_counts(postings.columns[TITLE], ids)
    # Over every row (an array the index's size is cheaper than merging two long postings)
    freq = np.zeros(len(postings.chunk_ids), dtype=np.float64)
    if float(title_weight).is_integer():  # sums of whole numbers: exact in any order
        freq[title_rows] = title_weight * title_counts
        freq[text_rows] += text_counts
    else:
        for k in range(1, int(title_counts.max(initial=0)) + 1):
            freq[title_rows[title_counts >= k]] += title_weight
        for k in range(1, int(text_counts.max(initial=0)) + 1):
            freq[text_rows[text_counts >= k]] += 1.0
    rows = np.flatnonzero(freq)
    return rows, freq[rows]


def postings_search(
    postings: Postings,
    phrases: Sequence[Sequence[str]],
    limit: int,
    title_weight: float = 0.0,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """The best ``limit`` chunks for an OR of ``phrases`` (each its tokens) by bm25(), as
    :func:`truthbase.store.sqlite.search.fts_search` ranks them; ``doc_ids`` keeps those
    documents' chunks (N and df stay the whole index's, as FTS5's do)."""
    if limit <= 0 or (doc_ids is not None and not doc_ids):
        return []
    scores = np.zeros(len(postings.chunk_ids), dtype=np.float64)
    matched = np.zeros(len(postings.chunk_ids), dtype=np.bool_)
    n = float(postings.row_count)
    for phrase in phrases:
        ids = [postings.vocabulary.get(token, -1) for token in phrase]
        if not ids or min(ids) < 0:
            continue  # no row holds it: it adds nothing to any score
        rows, freq = _frequencies(postings, ids, title_weight)
        if not len(rows):
            continue
        df = float(len(rows))
        idf = math.log((n - df + 0.5) / (df + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        scores[rows] += idf * ((freq * (K1 + 1.0)) / (freq + postings.norms[rows]))
        matched[rows] = True
    if doc_ids is not None:
        wanted = [postings.doc_names[d] for d in doc_ids if d in postings.doc_names]
        matched &= np.isin(postings.docs, np.asarray(wanted, dtype=np.int32))
    rows = np.flatnonzero(matched)
    if len(rows) > limit:  # the rows scoring at least the limit-th score, ties included
        cut = np.partition(scores[rows], len(rows) - limit)[len(rows) - limit]
        rows = rows[scores[rows] >= cut]
    order = np.lexsort((postings.chunk_ids[rows], -scores[rows]))[:limit]
    return [
        ArmHit(chunk_id=int(postings.chunk_ids[r]), rank=rank, score=float(scores[r]))
        for rank, r in enumerate(rows[order], start=1)
    ]


#: Full-text queries of one generation FTS5 answers before the postings are built: a one-shot
#: command (``truthbase ask``: a question and its feedback query) never pays for a build it
#: would not use; a server, or an evaluation, builds them on its next query.
BUILD_AFTER_QUERIES = 3


class PostingsCache:
    """The postings of one index from ``min_rows`` chunks (None: never): those of the current
    generation when they are ready; otherwise None, after starting their build in a background
    thread once ``after_queries`` queries of the generation were asked, while FTS5 answers with
    the same ranking (one build at a time, an old generation's arrays dropped as the new
    generation's build starts, a failed build not retried for its generation:
    :class:`..background.BackgroundValue`)."""

    def __init__(self, min_rows: int | None, after_queries: int = BUILD_AFTER_QUERIES) -> None:
        self.min_rows = min_rows
        self.after_queries = after_queries
        self._lock = threading.Lock()
        self._asked = 0  # queries of the current generation so far
        self._wanted: tuple[int, bool] | None = None  # (generation, chunks >= min_rows)
        self._value: BackgroundValue[int, Postings] = BackgroundValue(
            "truthbase-fts", "full-text postings not built; FTS5 answers this index generation"
        )

    @property
    def builds(self) -> int:
        """Postings built by this cache (the tests count them)."""
        return self._value.builds

    def running(self) -> threading.Thread | None:
        """The build thread, once one started (the tests join it)."""
        return self._value.running()

    def postings(self, db: Database, *, wait: bool = False) -> Postings | None:
        """The current generation's postings, or None (below ``min_rows``, being built, or their
        build failed for this generation; ``wait``: built here first)."""
        if self.min_rows is None:
            return None
        generation = db.generation()
        ready = self._value.ready(generation)
        if ready is not None:
            return ready
        with self._lock:
            if self._wanted is None or self._wanted[0] != generation:
                chunks = int(db.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
                self._wanted = (generation, chunks >= max(self.min_rows, 1))
                self._asked = 0
            if not self._wanted[1]:
                return None
            self._asked += 1
            if self._asked <= self.after_queries and not wait:
                return None
        postings = self._value.get(generation, lambda: _build(db, generation), wait=wait)
        if wait and postings is None and db.generation() != generation:
            return self.postings(db, wait=True)  # the index moved during the build
        return postings


def _build(db: Database, generation: int) -> Postings | None:
    """The postings of ``generation``, or None when the index moved while they were read."""
    try:
        postings = load_postings(db)
    except IndexMoved:
        return None  # the next query builds the new generation's
    if db.generation() != generation:
        return None  # a write during the read: the next query builds the new generation's
    return postings
