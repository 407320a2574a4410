"""Where the tests find the shared corpus (``../shared`` beside the repository), and the policy
for tests that need it.

Tests that read the corpus carry the ``corpus`` marker: explicitly (``pytestmark`` or a
decorator) when they open these paths, automatically (tests/conftest.py) when they use a fixture
built from the corpus (:data:`CORPUS_FIXTURES`, and any fixture that depends on one). Without the
corpus they are skipped with :func:`corpus_missing`'s reason, except under CI (``CI`` set to
``true`` or ``1``), where each of them fails: a CI run must never turn green by skipping the
corpus tests. Everything else, ``tests/unit`` at least, runs on a bare clone.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SEED = CORPUS / "seed"
ROBUSTNESS = CORPUS / "robustness"
EPUB = CORPUS / "epub"
GOLDEN_DEV = SHARED / "golden" / "dev.json"
#: The conversation set: follow-up questions (CONVERSATIONS.md), on the documents of dev.json.
GOLDEN_FOLLOWUPS = SHARED / "golden" / "followups-dev.json"
#: The capabilities set (scans, tables, German, Chinese), on documents of robustness/.
GOLDEN_CAPABILITIES = SHARED / "golden" / "capabilities-dev.json"

#: The title of the long EPUB book of dev.json (golden_db), as stored.
PRIDE_TITLE = "Pride and Prejudice"

#: Fixtures built from the corpus: a test that uses one (directly or through another fixture)
#: is marked ``corpus`` automatically.
CORPUS_FIXTURES = frozenset({"seed_index", "seed_db", "golden_db", "capabilities_db"})

MARKER = "corpus"

_REQUIRED = (SEED, ROBUSTNESS, EPUB, GOLDEN_DEV)


def corpus_missing() -> str | None:
    """Why the corpus tests cannot run here, or None when they can."""
    absent = [str(p) for p in _REQUIRED if not p.exists()]
    if not absent:
        return None
    return (
        f"the shared corpus is missing ({', '.join(absent)}): the repository expects the "
        f"corpus checkout at {SHARED}"
    )


def corpus_required() -> bool:
    """True under CI: a missing corpus fails the corpus tests instead of skipping them."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
