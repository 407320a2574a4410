-- TruthBase PostgreSQL migration 3: the segment index (truthbase.segments; queries in
-- postgres/segments.py), as in SQLite's schema.sql: a document's segments per summarizer id
-- ("extractive-v1", "llm:MODEL"), each with its tagged summary and the summary's vector.
CREATE TABLE IF NOT EXISTS truthbase.segments (
    doc_id     text NOT NULL REFERENCES truthbase.documents(id) ON DELETE CASCADE,
    summarizer text NOT NULL,                    -- cache key
    idx        integer NOT NULL,                 -- 0-based, reading order
    title      text NOT NULL,
    parts      text NOT NULL,                    -- JSON [[unit, start, end], ...]
    summary    text NOT NULL,                    -- with position tags [f{unit}-{start}-{end}]
    written_by text NOT NULL,                    -- the summarizer that wrote this summary
    builder    text NOT NULL,
    embedder   text,
    vector     bytea,                            -- float32 (dim,): the summary's embedding
    PRIMARY KEY (doc_id, summarizer, idx)
);
