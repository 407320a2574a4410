-- TruthBase SQLite schema. Bump SCHEMA_VERSION in sqlite.py with every change.
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
    report            TEXT NOT NULL              -- JSON: what extraction repaired
);

CREATE TABLE IF NOT EXISTS units (
    doc_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,                   -- 0-based page (or spine item)
    label    TEXT,                               -- printed page label
    href     TEXT,                               -- EPUB spine item
    text     TEXT NOT NULL,                      -- canonical text: every offset points here
    boxes    BLOB,                               -- float32 (len(text), 4), NaN for no box
    geometry TEXT,                               -- JSON: mediabox, cropbox, rotation
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
    vector  BLOB NOT NULL                        -- float32 (dim,), L2-normalized
);
CREATE INDEX IF NOT EXISTS chunks_by_unit ON chunks (doc_id, unit);

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text,
    content = 'chunks',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
