-- TruthBase PostgreSQL migration 7 -> 8: languages, and the full text over terms made in Python.
--
-- Each unit and document gains its detected language (ISO 639-1, truthbase.lang), and each chunk
-- the full-text terms of its text and of its document's title, as truthbase.fulltext makes them
-- (stemmed by Snowball in the unit's language, CJK runs as character bigrams). SQLite's FTS5
-- indexes the same strings (tokenize = 'ascii'), so neither database tokenizes or stems: the
-- unicode61 and Porter emulation of migration 4 (fts_fold, fts_prepare, fts_stem,
-- fts_departures, the truthbase.porter dictionary) is gone, and fts_tokens only splits a
-- string as FTS5's ascii tokenizer does (at ASCII characters other than letters and digits,
-- ASCII letters lower-cased). The functions keep their names, so functions.sql is unchanged.
--
-- The terms of the rows already stored are made by schema.py right after this script (Python:
-- the language detector and the stemmers), which then recounts the full-text statistics.
ALTER TABLE truthbase.units ADD COLUMN language text;
ALTER TABLE truthbase.documents ADD COLUMN language text;

ALTER TABLE truthbase.chunks DROP COLUMN tsv, DROP COLUMN ntok;
DROP FUNCTION truthbase.fts_phrase(text);
DROP FUNCTION truthbase.fts_vector(text);
DROP FUNCTION truthbase.fts_tokens(text);
DROP FUNCTION truthbase.fts_stem(text);
DROP FUNCTION truthbase.fts_departures(text);
DROP FUNCTION truthbase.fts_prepare(text);
DROP FUNCTION truthbase.fts_fold(text);
DROP TEXT SEARCH DICTIONARY truthbase.porter;

ALTER TABLE truthbase.chunks
    ADD COLUMN terms text NOT NULL DEFAULT '',
    ADD COLUMN title_terms text NOT NULL DEFAULT '';

-- The tokens of a terms string with their positions (1, 2, ...), as FTS5's ascii tokenizer reads
-- it. A token over 2046 bytes keeps its position but is left out (no tsvector can hold it; the
-- Python tokenizer never makes one).
CREATE FUNCTION truthbase.fts_tokens(t text) RETURNS TABLE (lexeme text, pos integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT w.tok, w.pos::integer
    FROM regexp_split_to_table(
             btrim(regexp_replace(
                 translate(coalesce(t, ''), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
                           'abcdefghijklmnopqrstuvwxyz'),
                 E'[\\u0001-\\u002f\\u003a-\\u0040\\u005b-\\u0060\\u007b-\\u007f]+', ' ', 'g')),
             ' ') WITH ORDINALITY AS w(tok, pos)
    WHERE w.tok <> '' AND octet_length(w.tok) <= 2046;
END;

-- A text's tsvector: each lexeme with its positions (PostgreSQL caps a position at 16383).
CREATE FUNCTION truthbase.fts_vector(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT coalesce(string_agg(quote_literal(x.lexeme) || ':' || x.positions, ' '), '')::tsvector
    FROM (
        SELECT k.lexeme, string_agg(least(k.pos, 16383)::text, ',' ORDER BY k.pos) AS positions
        FROM truthbase.fts_tokens(t) k
        GROUP BY k.lexeme
    ) x;
END;

-- A term's phrase query (its lexemes, each followed by the next); NULL when it has none.
CREATE FUNCTION truthbase.fts_phrase(term text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT string_agg(quote_literal(k.lexeme), ' <-> ' ORDER BY k.pos)::tsquery
    FROM truthbase.fts_tokens(term) k;
END;

-- The title terms as weight A, the text's as D; ntok counts both, as FTS5's BM25 length does
-- (the terms strings hold single spaces between terms, nothing else to split at).
ALTER TABLE truthbase.chunks
    ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(truthbase.fts_vector(title_terms), 'A')
        || setweight(truthbase.fts_vector(terms), 'D')
    ) STORED,
    ADD COLUMN ntok integer GENERATED ALWAYS AS (
        coalesce(array_length(array_remove(
            string_to_array(title_terms || ' ' || terms, ' '), ''), 1), 0)
    ) STORED;
ALTER TABLE truthbase.chunks ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX chunks_tsv ON truthbase.chunks USING gin (tsv);
