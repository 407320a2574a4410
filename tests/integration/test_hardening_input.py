"""Hostile input to the HTTP API, over a small index of its own (a PDF and an EPUB written in
tmp_path, so the files can be changed under the server): the file route serves only the bytes
ingested (no link followed), no message names a server path, every malformed page/unit/offset
is a 4xx, a lone surrogate in the question is a 4xx."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.helpers.canaries import text_pdf
from tests.helpers.epub_books import simple_book
from truthbase.app.redaction import redact_paths
from truthbase.config import ServerSettings, Settings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

PARAGRAPHS = [
    "The lighthouse keeper logged every ship that passed the northern cape in the winter.",
    "In the spring the keeper repainted the lamp room and replaced the brass fittings.",
]


@dataclass
class Library:
    root: Path
    pdf: Path
    epub: Path
    pdf_id: str
    epub_id: str
    client: TestClient


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Library]:
    root = tmp_path_factory.mktemp("hostile")
    files = root / "files"
    files.mkdir()
    pdf = files / "keeper.pdf"
    pdf.write_bytes(text_pdf(PARAGRAPHS, title="The Keeper"))
    epub = simple_book(files, "<h1>One</h1><p>The keeper's book has a chapter.</p>")
    db = root / "index.sqlite"
    store = SQLiteStore(db)
    try:
        summary = ingest_paths([pdf, epub], store, embedder, IngestOptions())
        ids = {Path(d.path).name: d.id for d in store.list_documents()}
    finally:
        store.close()
    assert not summary.failed and len(ids) == 2, (summary, ids)
    web = root / "web"  # no pages at all: GET / answers 404
    web.mkdir()
    settings = Settings(db=db, server=ServerSettings(web_dir=web, allowed_hosts=["testserver"]))
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Library(root, pdf, epub, ids[pdf.name], ids[epub.name], client)


def _no_path(library: Library, body: str) -> None:
    assert str(library.root) not in body and "/tmp" not in body, body


def test_file_route_serves_only_the_ingested_bytes(library: Library) -> None:
    client, url = library.client, f"/api/documents/{library.pdf_id}/file"
    original = library.pdf.read_bytes()
    ok = client.get(url)
    assert ok.status_code == 200 and ok.content == original
    assert ok.headers["content-type"] == "application/pdf"
    try:
        library.pdf.write_bytes(original + b"\n% appended after ingest\n")
        changed = client.get(url)
        assert changed.status_code == 409, changed.text
        _no_path(library, changed.text)
        # The same bytes behind a link are refused too: nothing is served through a link.
        html = library.root / "page.html"
        html.write_text("<html><script>alert(document.cookie)</script></html>")
        library.pdf.unlink()
        library.pdf.symlink_to(html)
        linked = client.get(url)
        assert linked.status_code == 409, linked.text
        assert b"<script>" not in linked.content
        library.pdf.unlink()
        copy = library.root / "copy.pdf"
        copy.write_bytes(original)
        library.pdf.symlink_to(copy)
        assert client.get(url).status_code == 409  # a link even to the right bytes
        library.pdf.unlink()
        gone = client.get(url)
        assert gone.status_code == 404, gone.text
        _no_path(library, gone.text)
        # A link on the way (the folder) is refused as well.
        folder = library.pdf.parent
        moved = library.root / "moved"
        shutil.move(folder, moved)
        (moved / library.pdf.name).write_bytes(original)
        os.symlink(moved, folder)
        assert client.get(url).status_code == 409
        folder.unlink()
        shutil.move(moved, folder)
    finally:
        if library.pdf.is_symlink() or library.pdf.exists():
            library.pdf.unlink()
        library.pdf.write_bytes(original)
    assert client.get(url).status_code == 200  # the restored bytes serve again


def test_book_images_and_pages_name_no_server_path(library: Library) -> None:
    client = library.client
    original = library.epub.read_bytes()
    try:
        library.epub.unlink()
        for url in (
            f"/api/documents/{library.epub_id}/file",
            f"/api/epub/images/{library.epub_id}?member=OEBPS/x.png",
        ):
            response = client.get(url)
            assert response.status_code == 404, (url, response.text)
            _no_path(library, response.text)
    finally:
        library.epub.write_bytes(original)
    page = client.get("/")
    assert page.status_code == 404
    _no_path(library, page.text)


def test_redact_paths() -> None:
    assert redact_paths("cannot open /tmp/x/index.sqlite: denied") == "cannot open <path>: denied"
    assert (
        redact_paths("[Errno 2] No such file: '/usr/lib/x'") == "[Errno 2] No such file: '<path>'"
    )
    assert (
        redact_paths("see /api/documents/abc/file and 1/2") == "see /api/documents/abc/file and 1/2"
    )


BAD_INTS = [str(2**63), str(2**64), str(-(2**63) - 1), "-1", "x", "1.5", "1e3", "", "٣"]


@pytest.mark.parametrize("value", BAD_INTS)
def test_malformed_page_unit_and_offsets_are_4xx(library: Library, value: str) -> None:
    client, pdf, epub = library.client, library.pdf_id, library.epub_id
    urls = [
        f"/api/spans?doc={pdf}&page={value}&start=0&end=1",
        f"/api/spans?doc={pdf}&page=1&start={value}&end=1",
        f"/api/spans?doc={pdf}&page=1&start=0&end={value}",
        f"/api/epub/spans?doc={epub}&unit={value}&start=0&end=1",
        f"/api/epub/spans?doc={epub}&unit=0&start=0&end={value}",
        f"/api/search?q=keeper&k={value}",
    ]
    if value:  # an empty path segment is another route
        urls += [f"/api/epub/sections/{epub}/{value}", f"/api/epub/sections/{epub}/{value}/xhtml"]
    for url in urls:
        response = client.get(url)
        assert 400 <= response.status_code < 500, (url, response.status_code, response.text)


def test_the_valid_requests_still_answer(library: Library) -> None:
    client = library.client
    assert client.get(f"/api/spans?doc={library.pdf_id}&page=1&start=0&end=5").status_code == 200
    assert client.get(f"/api/epub/sections/{library.epub_id}/0").status_code == 200
    assert client.get(f"/api/epub/sections/{library.epub_id}/0/xhtml").status_code == 200
    last = client.get(f"/api/spans?doc={library.pdf_id}&page={2**31 - 1}&start=0&end=0")
    assert last.status_code == 404  # in range, no such page


@pytest.mark.parametrize(
    "body",
    [
        '{"question": "\\ud800"}',
        '{"question": "who kept the \\udfff lighthouse?"}',
        '{"question": "who?", "mode": "\\ud800"}',
        '{"question": "who?", "doc": "\\ud800"}',
        '{"question": "who?", "\\ud800": 1}',
    ],
)
def test_lone_surrogates_in_the_chat_body_are_4xx(library: Library, body: str) -> None:
    response = library.client.post(
        "/api/chat", content=body.encode(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    json.loads(response.text)  # a JSON body the client can read


@pytest.mark.parametrize(
    "body",
    ['{"name": "\\ud800", "password": "x"}', '{"name": "a", "password": "\\udfff"}'],
)
def test_lone_surrogates_in_the_login_body_are_4xx(library: Library, body: str) -> None:
    response = library.client.post(
        "/login", content=body.encode(), headers={"content-type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text


def test_a_real_question_still_streams(library: Library) -> None:
    response = library.client.post("/api/chat", json={"question": "Who logged the ships?"})
    assert response.status_code == 200 and "event: done" in response.text
