"""The one exception extraction raises for a file it cannot turn into text."""

from __future__ import annotations

from typing import Literal

from ..errors import TruthBaseError

ExtractionFailure = Literal[
    "encrypted", "not_pdf", "corrupt", "no_text", "unsupported", "not_epub", "drm", "zip_bomb"
]


class ExtractionError(TruthBaseError):
    """A document that cannot be ingested, with a machine-readable ``reason``.

    ``reason`` lets the CLI and server react (ask for a password, suggest OCR) without parsing
    the human message, which says what happened to which file and what to do about it.
    """

    def __init__(self, reason: ExtractionFailure, message: str, *, path: str | None = None):
        super().__init__(message)
        self.reason: ExtractionFailure = reason
        self.message = message
        self.path = path

    def __repr__(self) -> str:
        return f"ExtractionError(reason={self.reason!r}, message={self.message!r})"
