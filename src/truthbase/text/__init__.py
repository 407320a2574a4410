"""Text as every stage reads it: pure functions over strings, on the ground floor.

- :mod:`.matching`: the one quote matcher (normalize, find a quote, is a quote in a text).
- :mod:`.vocabulary`: words, stop words, stemming, idf and term overlap.
- :mod:`.sentences`: sentence boundaries (chunking, answers, citations, the injection screen).
- :mod:`.language`: which language a unit is written in (detected at ingest).
- :mod:`.fulltext`: the full-text index terms, the same for both store backends.
- :mod:`.valid`: whether a string from outside is text at all (no lone surrogate).

Nothing here imports a pipeline stage; :mod:`.language` reads the document records of
:mod:`truthbase.model`. Import the module you use (``from truthbase.text.matching import
normalize``): this package re-exports nothing.
"""
