"""The Python API (`truthbase.Library`): the example of docs/python-api.md runs as written on a
real PDF, and the library's calls on a copy of the seed index give what the server gives (the
chat's event order, scoped search, clear errors)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import indexes
from tests.helpers.corpus import ROBUSTNESS
from truthbase import Library
from truthbase.answer.model import CitationsEvent, DoneEvent, SourcesEvent, TokenEvent
from truthbase.embed import Embedder
from truthbase.errors import InvalidInput, NotFound
from truthbase.people import Viewer

pytestmark = [pytest.mark.corpus]

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def _guide_example() -> str:
    match = re.search(r"```python\n(.*?)```", GUIDE.read_text("utf-8"), re.S)
    assert match, "docs/python-api.md has no python code block"
    return match.group(1)


def test_the_guide_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(ROBUSTNESS / "pdfminer-zen_of_python_corrupted.pdf", tmp_path / "zen_of_python.pdf")
    monkeypatch.chdir(tmp_path)
    exec(compile(_guide_example(), "docs/python-api.md", "exec"), {"__name__": "__guide__"})
    out = capsys.readouterr().out
    assert "1 ingested, 0 failed" in out
    # Its metadata Title is the name of the file it was made from, "zen_of_python.txt", which is
    # no title; no line is set large: the file's name (extract/title.py).
    assert re.search(r"zen_of_python, page 1, chars \d+-\d+", out), out
    assert "supported []\nquote_only ['negation_dropped: " in out  # as the guide's comment says
    assert "[1] supported, page 1: Errors should never pass silently." in out
    assert out.index("sources\ntoken") < out.index("citations") < out.index("[1] supported")
    assert (tmp_path / "zen.sqlite").is_file()


@pytest.fixture(scope="module")
def library(seed_db: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Library:
    db = indexes.use_copy(seed_db, tmp_path_factory.mktemp("api") / "api.sqlite")
    return Library(db, embedder=embedder)


def test_ask_yields_the_servers_events_in_order(library: Library) -> None:
    events = list(library.ask("Who is the primary audience of the CSF?", mode="extractive"))
    kinds = [e.kind for e in events]
    assert kinds[0] == "sources" and kinds[-2:] == ["citations", "done"], kinds
    assert set(kinds[1:-2]) == {"token"}
    assert isinstance(events[0], SourcesEvent) and isinstance(events[-2], CitationsEvent)
    assert all(isinstance(e, TokenEvent) for e in events[1:-2])
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer.id is not None  # recorded for verify
    assert all(e.to_json()["type"] == e.kind for e in events)


def test_search_scoped_to_one_document_and_passages(library: Library) -> None:
    documents = library.documents()
    assert len(documents) == 4
    doc = next(d for d in documents if "Cybersecurity Framework" in d.title)
    hits = library.search("risk management", k=5, doc=doc.id[:8])
    assert hits and {h.chunk.doc_id for h in hits} == {doc.id}
    chunk = hits[0].chunk
    passage = library.passage(doc.id[:8], chunk.unit, chunk.start, chunk.end)
    assert passage.text == chunk.text and passage.page == chunk.unit + 1
    assert passage.tag == f"[f{chunk.unit}-{chunk.start}-{chunk.end}]" and passage.rects


def test_clear_errors(library: Library) -> None:
    doc = library.documents()[0].id
    with pytest.raises(NotFound, match="no document ffffffff"):
        library.passage("ffffffff", 0, 0, 1)
    with pytest.raises(InvalidInput, match="at least 4 characters"):
        library.search("risk", doc="ab")
    with pytest.raises(InvalidInput, match="out of range"):
        library.passage(doc, 10_000, 0, 1)
    with pytest.raises(InvalidInput, match="exactly one of page"):
        library.verify_claim(doc, "a quote", "a claim")


def test_a_user_sees_shared_documents_only(library: Library) -> None:
    bob = library.for_viewer(Viewer(user="bob"))
    assert len(bob.documents()) == 4  # the seed documents are shared
    assert bob.store is library.store
    bob.close()  # a view leaves the index open
    assert library.documents()


def test_a_postgresql_url_opens_the_same_index(
    library: Library, pg_seed_url: str, embedder: Embedder
) -> None:
    assert pg_seed_url.startswith("postgresql://")
    with Library(pg_seed_url, embedder=embedder) as pg:
        assert pg.settings.database_url == pg_seed_url
        assert {d.id for d in pg.documents()} == {d.id for d in library.documents()}
        query = "What are the six CSF Functions?"
        top = [h.chunk.id for h in pg.search(query, k=3)]
        assert top == [h.chunk.id for h in library.search(query, k=3)]
        doc = pg.documents()[0].id
        assert pg.passage(doc, 0, 0, 20).text == library.passage(doc, 0, 0, 20).text
