-- TruthBase PostgreSQL migration 9 -> 10 (only adds): what a chunk holds, running text or rows of
-- one table (truthbase.chunking), and a table chunk's column names, which are indexed with the
-- title terms (the per-chunk title_terms column, see store.codec.chunk_title_terms) but are not
-- part of its span.
ALTER TABLE truthbase.chunks
    ADD COLUMN kind text NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'table')),
    ADD COLUMN context text NOT NULL DEFAULT '';
