"""Golden sets, format version 1 (see golden/README.md): typed models and loading.

Loading validates the whole file, so an evaluation never starts on a malformed set: unknown
versions and unknown fields are rejected, every evidence record names a listed document and
exactly one of ``page`` (PDF, 1-based physical page) or ``section`` (EPUB spine href), answerable
questions carry evidence and unanswerable ones carry none, and question ids are unique.
The "Capabilities" section of the README adds two evidence fields: ``ocr`` (the page is a scan;
its quote is matched fuzzily) and ``cells`` (table evidence: cells of one row that must stand
together); the matching rules themselves are in :mod:`truthbase.eval.evidence`.
Nothing here depends on which questions a set holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InvalidInput

__all__ = [
    "CAPABILITY_TAGS",
    "KNOWN_TAGS",
    "SUPPORTED_VERSIONS",
    "GoldenDocument",
    "GoldenError",
    "GoldenEvidence",
    "GoldenQuestion",
    "GoldenSet",
    "default_corpus_root",
    "golden_warnings",
    "is_cjk",
    "load_golden",
    "parse_golden",
    "resolve_document_paths",
]

SUPPORTED_VERSIONS = (1,)

#: The tags golden/README.md defines; others load fine but are reported by golden_warnings.
KNOWN_TAGS = frozenset(
    {
        "fact",
        "definition",
        "number",
        "list",
        "table",
        "multi-page",
        "multi-step",
        "ambiguous",
        "paraphrase",
        "keyword",
        "hyphenated",
        "epub",
        "unanswerable",
        "ocr",
        "german",
        "cjk",
    }
)

#: The tags of documents that are not clean English text PDFs (README "Capabilities"), in the
#: order the capability reports list them.
CAPABILITY_TAGS = ("ocr", "german", "table", "cjk")
_CAPABILITY_ONLY_TAGS = frozenset(CAPABILITY_TAGS) - {"table"}

QUOTE_MIN_CHARS = 30
QUOTE_MAX_CHARS = 300


class GoldenError(InvalidInput):
    """A golden file that cannot be used: unreadable, unknown version, or invalid."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GoldenDocument(_Model):
    """A document of the set; ``path`` is relative to the corpus root (the ``shared/`` folder)."""

    path: str = Field(min_length=1)


class GoldenEvidence(_Model):
    """Where the supporting quote is: a PDF page (1-based) or an EPUB section (spine href)."""

    doc: str = Field(min_length=1)
    page: int | None = Field(default=None, ge=1, strict=True)
    section: str | None = Field(default=None, min_length=1)
    quote: str = Field(min_length=1)
    #: The page is a scan read by OCR: the quote is as printed and is matched fuzzily.
    ocr: bool = Field(default=False, strict=True)
    #: Table evidence: cells of one row (or a header and a row's value) that must stand together
    #: in one chunk and one citation; ``quote`` is the cell holding the answer.
    cells: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _one_location(self) -> GoldenEvidence:
        if (self.page is None) == (self.section is None):
            raise ValueError("evidence needs exactly one of 'page' (PDF) or 'section' (EPUB)")
        if self.cells is not None and (not self.cells or not all(c.strip() for c in self.cells)):
            raise ValueError("'cells' needs at least one cell, and no cell may be blank")
        return self

    @property
    def unit_index(self) -> int | None:
        """The 0-based unit index of a PDF page (page - 1); None for EPUB evidence."""
        return None if self.page is None else self.page - 1


class GoldenQuestion(_Model):
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answerable: bool
    answer: str | None = None
    evidence: tuple[GoldenEvidence, ...] = ()
    tags: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _evidence_matches_answerable(self) -> GoldenQuestion:
        if self.answerable and not self.evidence:
            raise ValueError(f"question {self.id}: answerable but has no evidence")
        if not self.answerable and self.evidence:
            raise ValueError(f"question {self.id}: unanswerable but has evidence")
        return self

    @property
    def kind(self) -> str:
        """The kind of document its evidence is in: "pdf", "epub", "mixed", or "none" (no
        evidence: an unanswerable question). Metrics are reported per kind."""
        kinds = {"pdf" if e.page is not None else "epub" for e in self.evidence}
        if not kinds:
            return "none"
        return kinds.pop() if len(kinds) == 1 else "mixed"


class GoldenSet(_Model):
    version: int
    documents: dict[str, GoldenDocument]
    questions: tuple[GoldenQuestion, ...]

    @model_validator(mode="after")
    def _consistent(self) -> GoldenSet:
        if self.version not in SUPPORTED_VERSIONS:
            raise ValueError(_version_message(self.version))
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"duplicate question id {question.id!r}")
            seen.add(question.id)
            for evidence in question.evidence:
                if evidence.doc not in self.documents:
                    raise ValueError(
                        f"question {question.id}: evidence names document {evidence.doc!r}, "
                        f"which is not in 'documents' ({', '.join(sorted(self.documents))})"
                    )
        return self

    @property
    def answerable(self) -> tuple[GoldenQuestion, ...]:
        """The questions with evidence: the ones retrieval metrics are computed on."""
        return tuple(q for q in self.questions if q.answerable)

    @property
    def uses_capabilities(self) -> bool:
        """Whether the set uses the README's "Capabilities" section: an ``ocr`` or ``cells``
        record, or a tag only that section defines (``ocr``, ``german``, ``cjk``). Reports add
        their per-capability sections only then, so a set from before (dev.json, whose
        ``table`` tag is older) reports as it did."""
        return any(
            set(q.tags) & _CAPABILITY_ONLY_TAGS or any(e.ocr or e.cells for e in q.evidence)
            for q in self.questions
        )


def _version_message(version: object) -> str:
    supported = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
    return f"unsupported golden format version {version!r} (this TruthBase reads: {supported})"


def parse_golden(data: Any, source: str = "<golden>") -> GoldenSet:
    """Validate already-parsed JSON as a golden set; raises GoldenError with ``source`` named."""
    if not isinstance(data, dict):
        raise GoldenError(f"{source}: a golden set is a JSON object, got {type(data).__name__}")
    if "version" not in data:
        raise GoldenError(f"{source}: no 'version' field")
    version = data["version"]
    if isinstance(version, bool) or version not in SUPPORTED_VERSIONS:
        raise GoldenError(f"{source}: {_version_message(version)}")
    try:
        return GoldenSet.model_validate(data)
    except ValidationError as exc:
        raise GoldenError(f"{source}: invalid golden set: {_errors_text(exc)}") from exc


#: Validation errors a GoldenError names; the others are counted.
SHOWN_ERRORS = 3


def _errors_text(exc: ValidationError) -> str:
    """Where each of the first errors is and what is wrong there, on one line ("questions.0.
    evidence.0.page: Input should be greater than 0"): pydantic's own text is a block of
    lines with a link each, which the CLI's one-line error cannot carry."""
    errors = exc.errors(include_url=False)
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'the set'}: {e['msg']}"
        for e in errors[:SHOWN_ERRORS]
    ]
    more = len(errors) - SHOWN_ERRORS
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def load_golden(path: Path) -> GoldenSet:
    """Read and validate a golden file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GoldenError(f"{path}: cannot read golden file: {exc}") from exc
    except RecursionError:
        raise GoldenError(f"{path}: not a golden file (JSON nested too deeply)") from None
    return parse_golden(data, str(path))


def default_corpus_root(golden_path: Path) -> Path:
    """Where document paths are relative to when nobody says: the golden folder's parent.

    ``shared/golden/dev.json`` -> ``shared/``. Made absolute first, so a bare ``dev.json`` works.
    """
    return golden_path.absolute().parent.parent


def resolve_document_paths(golden: GoldenSet, corpus_root: Path) -> dict[str, Path]:
    """Each document name -> its file path under ``corpus_root`` (not checked for existence)."""
    return {name: corpus_root / doc.path for name, doc in golden.documents.items()}


def golden_warnings(golden: GoldenSet) -> list[str]:
    """Soft problems that do not stop an evaluation: README conventions a set does not follow."""
    warnings: list[str] = []
    for question in golden.questions:
        unknown = sorted(set(question.tags) - KNOWN_TAGS)
        if unknown:
            warnings.append(f"question {question.id}: unknown tags {', '.join(unknown)}")
        for evidence in question.evidence:
            n = len(evidence.quote)
            # The README lifts the minimum for OCR quotes, for Japanese and Chinese (one
            # character carries a word) and, by its nature, for a table cell.
            short_ok = evidence.ocr or evidence.cells is not None or is_cjk(evidence.quote)
            if n > QUOTE_MAX_CHARS or (n < QUOTE_MIN_CHARS and not short_ok):
                warnings.append(
                    f"question {question.id}: quote of {n} characters "
                    f"(expected {QUOTE_MIN_CHARS} to {QUOTE_MAX_CHARS})"
                )
    return warnings


#: Han (with extension A, the compatibility ideographs and the supplementary planes), kana and
#: Hangul syllables: the scripts where one character carries a word.
_CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3FFFF),
)


def is_cjk(text: str) -> bool:
    """True when most of the letters of ``text`` are Chinese, Japanese or Korean characters."""
    letters = [ch for ch in text if ch.isalpha()]
    cjk = sum(1 for ch in letters if any(lo <= ord(ch) <= hi for lo, hi in _CJK_RANGES))
    return bool(letters) and 2 * cjk > len(letters)
