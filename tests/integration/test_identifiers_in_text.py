"""Names and code in text, on both backends: over four real LaTeX package manuals of the
library (booktabs, listings, fancyvrb, pdflscape), a question that names a TeX macro, an
option, a key=value option or a command-line flag finds a passage that holds it at rank 1-3,
in the full-text arm and in the product's hybrid search, on SQLite and on PostgreSQL (a copy
of the same index). PostgreSQL's migration 13 (the terms made again) is checked here too."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.helpers.corpus import SHARED
from truthbase.config import RetrievalSettings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore
from truthbase.store.postgres import SCHEMA_VERSION, PostgresStore

pytestmark = pytest.mark.corpus

LIBRARY = SHARED / "corpus" / "library" / "texlive"
MANUALS = [
    LIBRARY / "booktabs" / "booktabs.pdf",
    LIBRARY / "listings" / "listings.pdf",
    LIBRARY / "fancyvrb" / "fancyvrb-doc.pdf",
    LIBRARY / "pdflscape" / "pdflscape.pdf",
]
#: (question, the name a top passage must hold as written)
CASES = [
    (r"\cmidrule", r"\cmidrule"),
    (r"What does \cmidrule do?", r"\cmidrule"),
    ("breaklines", "breaklines"),
    ("How do I turn on breaklines in listings?", "breaklines"),
    ("What does gobble=2 do?", "gobble="),
    ("frame=single", "frame=single"),
    ("ps2pdf -dAutoRotatePages=/None", "-dAutoRotatePages=/None"),
    # ⟨trim⟩ is set in TeX's math-symbol font, whose brackets pdfium read as "htrimi"
    (r"What does the trim argument of \cmidrule do?", "(⟨trim⟩)"),
]
TOP = 3


@pytest.fixture(scope="module")
def manuals_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    path = tmp_path_factory.mktemp("manuals") / "manuals.sqlite"
    store = SQLiteStore(path)
    try:
        summary = ingest_paths(MANUALS, store, embedder, IngestOptions())
    finally:
        store.close()
    assert summary.count("ingested") == len(MANUALS), [(o.path, o.message) for o in summary.failed]
    return path


@pytest.fixture(scope="module")
def manuals_pg(manuals_db: Path) -> Iterator[str]:
    from tests.helpers.pg_server import copy_into_postgres, shared_server

    url = copy_into_postgres(manuals_db)
    yield url
    shared_server().drop_database(url)


@pytest.fixture(params=("sqlite", "postgres"))
def store(request: pytest.FixtureRequest, manuals_db: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        opened: Any = SQLiteStore(manuals_db)
    else:
        opened = PostgresStore(request.getfixturevalue("manuals_pg"))
    yield opened
    opened.close()


def _holds(text: str, name: str) -> bool:
    # TeX sets "--" and some hyphens as dashes; the text holds the name as typeset
    typeset = unicodedata.normalize("NFKC", text)
    for dash in "\u2010\u2011\u2013\u2212":
        typeset = typeset.replace(dash, "-")
    return name.casefold() in typeset.casefold()


@pytest.mark.parametrize(("question", "name"), CASES)
def test_a_named_identifier_is_found_in_the_top_three(
    store: Any, embedder: Embedder, question: str, name: str
) -> None:
    expression = build_fts_query(question)
    assert expression is not None
    fts = store.fts_search(expression, TOP, 1.0)
    chunks = {c.id: c for c in store.chunks([h.chunk_id for h in fts])}
    assert any(_holds(chunks[h.chunk_id].text, name) for h in fts), (question, expression)
    hybrid = search(store, embedder, question, RetrievalSettings(), k=TOP)
    assert any(_holds(h.chunk.text, name) for h in hybrid.hits), question


def test_postgres_step_13_makes_the_terms_again(manuals_pg: str) -> None:
    """A database at version 12 (before step 13) with the old terms (no whole identifier terms)
    gets them back from its stored text when opened, and its statistics recounted."""
    with psycopg.connect(manuals_pg) as conn:
        want = conn.execute("SELECT id, terms, title_terms FROM truthbase.chunks ORDER BY id")
        wanted = want.fetchall()
        stats = conn.execute("SELECT n, tokens FROM truthbase.fts_stats").fetchone()
        conn.execute("UPDATE truthbase.chunks SET terms = 'x', title_terms = ''")
        conn.execute("UPDATE truthbase.meta SET value = '12' WHERE key = 'schema_version'")
        conn.commit()
    PostgresStore(manuals_pg).close()
    with psycopg.connect(manuals_pg) as conn:
        got = conn.execute("SELECT id, terms, title_terms FROM truthbase.chunks ORDER BY id")
        assert got.fetchall() == wanted
        assert any("＼cmidrule" in terms for _, terms, _ in wanted)
        assert conn.execute("SELECT n, tokens FROM truthbase.fts_stats").fetchone() == stats
        version = conn.execute("SELECT value FROM truthbase.meta WHERE key = 'schema_version'")
        assert version.fetchone() == (str(SCHEMA_VERSION),)
