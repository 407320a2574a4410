-- Version 17: each chunk's section path (truthbase.sections), not in its span. Its terms join
-- the chunk's title_terms (store.codec.chunk_title_terms), so the full text needs no new column;
-- chunks stored before have none (a re-ingest gives them one). As SQLite's version 18.
ALTER TABLE truthbase.chunks ADD COLUMN IF NOT EXISTS section text NOT NULL DEFAULT '';
