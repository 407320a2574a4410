"""OCR in the tests: whether Tesseract can run here, and the golden set's fuzzy rule for quotes
read from scans (shared/golden/README.md, "Capabilities")."""

from __future__ import annotations

from functools import cache

import pytest

from tests.helpers.corpus import corpus_required
from truthbase.extract import OcrUnavailable, TesseractEngine
from truthbase.text.matching import normalize


@cache
def tesseract_missing() -> str | None:
    """Why Tesseract cannot run here (None when it can)."""
    try:
        TesseractEngine().close()
    except OcrUnavailable as exc:
        return str(exc)
    return None


def need_tesseract() -> None:
    """Skip the calling test without Tesseract; under CI (where `make test` installs it) fail."""
    missing = tesseract_missing()
    if missing is None:
        return
    if corpus_required():
        pytest.fail(f"Tesseract is required under CI: {missing}")
    pytest.skip(f"Tesseract is not installed: {missing}")


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _same(quote_word: str, text_word: str) -> bool:
    return _distance(quote_word, text_word) <= (1 if len(quote_word) <= 5 else 2)


def ocr_quote_share(quote: str, text: str) -> float:
    """The largest share of the quote's words found in order (each within 1 edit up to 5
    letters, 2 beyond) in a window of the text as long as the quote plus 20%: the golden rule's
    longest common subsequence, which a quote passes at 0.8."""
    words = normalize(quote).split()
    haystack = normalize(text).split()
    if not words:
        return 0.0
    window = max(len(words) + len(words) // 5, 1)
    best = 0
    for start in range(max(len(haystack) - window + 1, 1)):
        part = haystack[start : start + window]
        # longest common subsequence of the two word lists
        row = [0] * (len(part) + 1)
        for w in words:
            diagonal = 0
            for j, t in enumerate(part, 1):
                keep = row[j]
                row[j] = diagonal + 1 if _same(w, t) else max(row[j], row[j - 1])
                diagonal = keep
        best = max(best, row[-1])
    return best / len(words)


#: The robustness files without any text layer: OCR reads them (without Tesseract: no_text).
SCANS = ("ocrmypdf-c02-22.pdf", "ocrmypdf-linn.pdf", "ocrmypdf-rotated_skew.pdf")
