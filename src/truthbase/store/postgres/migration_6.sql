-- TruthBase PostgreSQL migration 5 -> 6 (only adds): what a chunk holds, running text or rows of
-- one table (truthbase.chunking), and a table chunk's column names, which are indexed with the
-- title (the per-chunk title column, see store.codec.fts_title) but are not part of its span.
ALTER TABLE truthbase.chunks
    ADD COLUMN kind text NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'table')),
    ADD COLUMN context text NOT NULL DEFAULT '';
