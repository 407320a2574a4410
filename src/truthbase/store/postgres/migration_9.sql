-- TruthBase PostgreSQL migration 8 -> 9 (only adds): how each unit's text was made. text_source is
-- pdf (the page's text layer), ocr (read from the rendered page) or epub; NULL for rows written
-- before (read back as pdf, or epub for units with an href). ocr is JSON: engine and version,
-- languages, dpi, mean word confidence, words, extra rotation.
ALTER TABLE truthbase.units ADD COLUMN text_source text;
ALTER TABLE truthbase.units ADD COLUMN ocr text;
