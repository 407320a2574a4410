-- TruthBase SQLite schema. Bump SCHEMA_VERSION in sqlite/connection.py with every change.
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS documents (
    id                TEXT PRIMARY KEY,          -- sha256 of the file's bytes
    title             TEXT NOT NULL,
    path              TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('pdf', 'epub')),
    unit_count        INTEGER NOT NULL,
    ingested_at       TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    report            TEXT NOT NULL,             -- JSON: what extraction repaired
    toc               TEXT,                      -- JSON: EPUB table of contents
    metadata          TEXT                       -- JSON: EPUB dc:* metadata
);

CREATE TABLE IF NOT EXISTS units (
    doc_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,                   -- 0-based page (or spine item)
    label    TEXT,                               -- printed page label
    href     TEXT,                               -- EPUB spine item
    text     TEXT NOT NULL,                      -- canonical text: every offset points here
    boxes    BLOB,                               -- float32 (len(text), 4), NaN for no box
    geometry TEXT,                               -- JSON: mediabox, cropbox, rotation
    html     TEXT,                               -- EPUB: the sanitized XHTML the reader shows
    dom_map  TEXT,                               -- EPUB: canonical offsets to DOM positions
    PRIMARY KEY (doc_id, idx)
);

CREATE TABLE IF NOT EXISTS chunks (
    id      INTEGER PRIMARY KEY,
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    unit    INTEGER NOT NULL,
    start   INTEGER NOT NULL,
    "end"   INTEGER NOT NULL,
    text    TEXT NOT NULL,
    rects   TEXT NOT NULL,                       -- JSON list of [x0, y0, x1, y1]
    vector  BLOB NOT NULL,                       -- float32 (dim,), L2-normalized
    kind    TEXT NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'table')),
    context TEXT NOT NULL DEFAULT ''             -- not in the span: a table chunk's column names
);
CREATE INDEX IF NOT EXISTS chunks_by_unit ON chunks (doc_id, unit);

-- Sentence windows inside a chunk, each with its own vector; the dense arm scores a chunk by the
-- best of its own vector and its windows' (max-sim). Offsets are unit offsets, like the chunk's.
CREATE TABLE IF NOT EXISTS windows (
    id       INTEGER PRIMARY KEY,
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    start    INTEGER NOT NULL,
    "end"    INTEGER NOT NULL,
    vector   BLOB NOT NULL                       -- float32 (dim,), L2-normalized
);
CREATE INDEX IF NOT EXISTS windows_by_chunk ON windows (chunk_id);

-- Each chunk's token vectors (the embedder's per-token hidden states) reduced to their signs, for
-- late interaction (truthbase.retrieve.late): n_tokens rows of ceil(dim / 8) bytes, as
-- np.packbits(matrix > 0, axis=1) packs them. Documents ingested before version 6 have none.
CREATE TABLE IF NOT EXISTS chunk_tokens (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    signs    BLOB NOT NULL
);

-- What the full-text index reads: each chunk's text with its document's title, so that a question
-- that names the document ("Self-RAG's critic") can match it (weighted at query time by bm25()).
-- A table chunk's column names (its context) are indexed with the title, outside its text.
CREATE VIEW IF NOT EXISTS chunks_fts_content AS
    SELECT c.id AS id,
           CASE WHEN c.context = '' THEN d.title ELSE d.title || char(10) || c.context END AS title,
           c.text AS text
    FROM chunks c JOIN documents d ON d.id = c.doc_id;

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title,
    text,
    content = 'chunks_fts_content',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Answers as they were shown (`truthbase ask`, POST /api/chat), for `truthbase verify`: the
-- answer object's JSON with its citations (source n, doc_id, unit, start, end, quote, verified).
CREATE TABLE IF NOT EXISTS answers (
    id         INTEGER PRIMARY KEY,
    question   TEXT NOT NULL,
    answer     TEXT NOT NULL,                    -- JSON: the answer object
    created_at TEXT NOT NULL                     -- ISO 8601, UTC
);

-- The segment index (truthbase.segments; queries in sqlite/segments.py): a document's segments
-- per summarizer id ("extractive-v1", "llm:MODEL"), each with its tagged summary and the
-- summary's vector. `builder` names the cutting rules; stale rows are rebuilt on use.
CREATE TABLE IF NOT EXISTS segments (
    doc_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    summarizer TEXT NOT NULL,                    -- cache key
    idx        INTEGER NOT NULL,                 -- 0-based, reading order
    title      TEXT NOT NULL,
    parts      TEXT NOT NULL,                    -- JSON [[unit, start, end], ...]
    summary    TEXT NOT NULL,                    -- with position tags [f{unit}-{start}-{end}]
    written_by TEXT NOT NULL,                    -- the summarizer that wrote this summary
    builder    TEXT NOT NULL,
    embedder   TEXT,
    vector     BLOB,                             -- float32 (dim,): the summary's embedding
    PRIMARY KEY (doc_id, summarizer, idx)
);
