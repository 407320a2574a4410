"""Hostile input to the HTTP API, over a small index of its own (a PDF and an EPUB written in
tmp_path, so the files can be changed under the server): the file route serves only the bytes
ingested (no link followed), no message names a server path, every malformed page/unit/offset
is a 4xx, a lone surrogate in the question is a 4xx."""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
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
from truthbase.export.evidence import EVIDENCE_FORMAT, EVIDENCE_VERSION
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.server import create_app
from truthbase.server.auth import COOKIE, sign, unsign
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


# -- requests that answered 500 or held the server (session 25's review) -----------------------

VERIFY = "/api/reports/verify"


@pytest.mark.parametrize(
    ("opening", "media"),
    [
        (b"<!-- truthbase-evidence/1\n", "text/markdown"),
        (b'<pre hidden id="truthbase-evidence"', "text/html"),
    ],
)
def test_unterminated_evidence_openings_are_refused_at_once(
    library: Library, opening: bytes, media: str
) -> None:
    """A lazy pattern retried from every opening without an end: 2.6 MB of them held the whole
    server for many minutes (time quadratic in the size, the interpreter lock held, so no
    in-process timeout could stop it: the reading runs in a child with a deadline)."""
    body = opening * (2_600_000 // len(opening))
    script = (
        "import sys; from truthbase.errors import InvalidInput;"
        "from truthbase.export.html import read_evidence\n"
        "try: read_evidence(sys.stdin.read())\n"
        "except InvalidInput as e: print(e)"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], input=body, capture_output=True, timeout=60, check=True
    )
    assert b"no TruthBase evidence" in child.stdout, child
    small = opening * (100_000 // len(opening))  # the route: the same refusal
    response = library.client.post(VERIFY, content=small, headers={"Content-Type": media})
    assert response.status_code == 422, response.text
    assert "no TruthBase evidence" in response.json()["detail"]


def _evidence(citations: object) -> bytes:
    answers = [{"id": 1, "answer": {"citations": citations}}]
    evidence = {"format": EVIDENCE_FORMAT, "version": EVIDENCE_VERSION, "answers": answers}
    block = html.escape(json.dumps(evidence))
    return f'<html><pre hidden id="truthbase-evidence">{block}</pre></html>'.encode()


def _cited(library: Library, **fields: object) -> dict[str, object]:
    record = {"n": 1, "doc_id": library.pdf_id, "unit": 0, "start": 0, "end": 3}
    return {**record, "quote": "The", "verified": True, **fields}


@pytest.mark.parametrize(
    "case", ["unit 2**63", "unit -2**63-1", "citations null", "citations 5", "n []", "ids {}"]
)
def test_crafted_evidence_records_are_rechecked_not_errors(library: Library, case: str) -> None:
    """Each answered 500 (an integer SQLite cannot hold, a list iterated, a dict key made of a
    list): now a problem of the report, or (a bad [n] on a span that holds) no problem."""
    citations, holds = {
        "unit 2**63": ([_cited(library, unit=2**63)], False),
        "unit -2**63-1": ([_cited(library, unit=-(2**63) - 1)], False),
        "citations null": (None, False),
        "citations 5": (5, False),
        "n []": ([_cited(library, n=[])], True),
        "ids {}": ([_cited(library, n={}, doc_id={})], False),
    }[case]
    response = library.client.post(
        VERIFY, content=_evidence(citations), headers={"Content-Type": "text/html"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is holds and len(body["problems"]) == (0 if holds else 1), body


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (_evidence([{"n": 1, "doc_id": "\ud800", "verified": True}]), "lone surrogate"),
        (b'<pre hidden id="truthbase-evidence">' + b"[" * 100_000 + b"</pre>", "nests too deeply"),
    ],
)
def test_evidence_that_cannot_be_read_back_is_4xx(
    library: Library, content: bytes, says: str
) -> None:
    response = library.client.post(VERIFY, content=content, headers={"Content-Type": "text/html"})
    assert response.status_code == 422, response.text
    assert says in response.json()["detail"]


def test_a_valid_evidence_record_still_rechecks(library: Library) -> None:
    response = library.client.post(
        VERIFY, content=_evidence([_cited(library)]), headers={"Content-Type": "text/html"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["checked_citations"] == 1


@pytest.mark.parametrize("answer_id", [str(2**63), str(2**64), "1" + "0" * 400])
def test_answer_ids_past_the_backends_integers_are_4xx(library: Library, answer_id: str) -> None:
    client = library.client
    for response in (
        client.get(f"/api/answers/{answer_id}/export"),
        client.get(f"/api/answers/{answer_id}/feedback"),
        client.post(f"/api/answers/{answer_id}/feedback", json={"kind": "up"}),
    ):
        assert response.status_code == 422, (answer_id, response.status_code, response.text)
    last = client.get(f"/api/answers/{2**63 - 1}/feedback")
    assert last.status_code == 404, last.text  # in range, no such answer
    citation = client.post("/api/answers/1/feedback", json={"kind": "up", "citation": 2**40})
    assert citation.status_code == 422, citation.text


def test_a_session_cookie_with_non_ascii_signature_is_no_session(library: Library) -> None:
    key = b"k" * 32
    assert unsign(key, sign(key, "abc")) == "abc"
    assert unsign(key, "abc.\xe9") is None and unsign(key, "abc.") is None
    response = library.client.post(
        "/logout", headers={"Cookie": f'{COOKIE}="a.\\351"'}, follow_redirects=False
    )
    assert response.status_code < 500, response.text


def test_a_malformed_origin_is_refused_as_cross_site(library: Library) -> None:
    response = library.client.post(
        "/api/collections", json={"name": "x"}, headers={"Origin": "http://[::1"}
    )
    assert response.status_code == 403, response.text


def test_an_overlong_multipart_boundary_is_4xx(library: Library) -> None:
    response = library.client.post(
        "/api/documents",
        content=b"x",
        headers={"Content-Type": f"multipart/form-data; boundary={'b' * 300}"},
    )
    assert response.status_code == 400, response.text
    assert "malformed multipart" in response.json()["detail"]
