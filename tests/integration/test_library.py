"""The library over HTTP, in process: uploads become jobs, the server's worker ingests them,
limits answer 413/429, bad files fail with their reason, the same bytes are one document, and
delete removes a document from search at once (stored answers keep their text; verify says
"document deleted")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers.canaries import CANARIES, text_pdf
from tests.helpers.corpus import ROBUSTNESS
from truthbase.cite import verify_answers
from truthbase.config import Settings, UploadSettings
from truthbase.server import create_app
from truthbase.store import SQLiteStore

PUMPS = [
    "The Harbour Pump Station moves 41 litres of seawater per second into the cooling loop.",
    "Its three pumps were replaced by the Ostrava works in 2019 after the flood of 2018.",
]


def _settings(tmp_path: Path, **library: Any) -> Settings:
    return Settings(
        db=tmp_path / "lib.sqlite",
        library=UploadSettings(poll_s=0.2, lease_s=20, **library),
    )


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(_settings(tmp_path))) as c:
        yield c


def _upload(client: TestClient, name: str, data: bytes, **fields: str) -> Any:
    return client.post(
        "/api/documents", files={"file": (name, data, "application/octet-stream")}, data=fields
    )


def _wait(client: TestClient, job_id: int, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = {j["id"]: j for j in client.get("/api/jobs").json()["jobs"]}
        if jobs[job_id]["state"] in ("done", "failed"):
            return jobs[job_id]
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not end: {jobs[job_id]}")


def test_an_untitled_upload_is_called_by_the_name_it_was_sent_under(client: TestClient) -> None:
    # An upload is stored under its hash; a PDF without a Title was called by that hash.
    response = _upload(client, "Harbour pumps 2024.pdf", text_pdf(PUMPS))
    assert response.status_code == 202, response.text
    done = _wait(client, response.json()["jobs"][0]["id"])
    assert done["state"] == "done", done
    library = client.get("/api/library").json()
    assert [d["title"] for d in library] == ["Harbour pumps 2024"]


def test_uploads_that_share_a_title_are_listed_apart(client: TestClient) -> None:
    # Two different PDFs, both titled "Harbour pumps": the Library page and the document
    # pickers showed two identical lines. Each listing labels them apart; titles stay.
    for name, paragraphs in (("pumps-a.pdf", PUMPS), ("pumps-b.pdf", PUMPS[::-1])):
        response = _upload(client, name, text_pdf(paragraphs, title="Harbour pumps"))
        assert response.status_code == 202, response.text
        assert _wait(client, response.json()["jobs"][0]["id"])["state"] == "done"
    for route in ("/api/library", "/api/documents"):
        listed = client.get(route).json()
        assert [d["title"] for d in listed] == ["Harbour pumps", "Harbour pumps"], route
        labels = {d["display_title"] for d in listed}
        assert labels == {f"Harbour pumps ({d['id'][:8]})" for d in listed}, route
    # Renamed, one title is its own again: both labels are the titles.
    first = client.get("/api/library").json()[0]
    renamed = client.patch(f"/api/documents/{first['id']}", json={"title": "Harbour pumps 2019"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["display_title"] == "Harbour pumps 2019"
    assert sorted(d["display_title"] for d in client.get("/api/documents").json()) == [
        "Harbour pumps",
        "Harbour pumps 2019",
    ]


def test_upload_ingest_search_delete(client: TestClient, tmp_path: Path) -> None:
    pdf = text_pdf(PUMPS, title="Harbour pumps")
    # Named .txt on purpose: the content decides, not the name.
    response = _upload(client, "notes.txt", pdf)
    assert response.status_code == 202, response.text
    job = response.json()["jobs"][0]
    assert job["state"] == "queued" and job["filename"] == "notes.txt"
    done = _wait(client, job["id"])
    assert done["state"] == "done", done
    doc_id = done["doc_id"]
    stored = tmp_path / "lib-data" / "uploads" / doc_id[:2] / f"{doc_id}.pdf"
    assert stored.read_bytes() == pdf

    library = client.get("/api/library").json()
    assert [d["id"] for d in library] == [doc_id]
    assert library[0]["title"] == "Harbour pumps" and library[0]["status"] == "ready"
    assert library[0]["contains_instructions"] is False

    hits = client.get("/api/search", params={"q": "Ostrava works pumps"}).json()["results"]
    assert hits and hits[0]["doc_id"] == doc_id

    # The same bytes again: one document, the job done at once.
    again = _wait(client, _upload(client, "copy.pdf", pdf).json()["jobs"][0]["id"])
    assert again["state"] == "done" and again["doc_id"] == doc_id
    assert len(client.get("/api/library").json()) == 1

    # Rename reaches the listing and the full text's title column.
    renamed = client.patch(f"/api/documents/{doc_id}", json={"title": "Quayside machinery"})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Quayside machinery"
    hits = client.get("/api/search", params={"q": "quayside"}).json()["results"]
    assert hits and hits[0]["doc_id"] == doc_id

    # An answer cites it; then the document goes.
    with client.stream("POST", "/api/chat", json={"question": "Who replaced the pumps?"}) as r:
        assert r.status_code == 200
        "".join(r.iter_text())
    assert client.delete(f"/api/documents/{doc_id}").status_code == 200
    assert client.get("/api/library").json() == []
    assert client.get("/api/search", params={"q": "Ostrava works pumps"}).json()["results"] == []
    assert not stored.exists()
    assert client.get(f"/api/documents/{doc_id}/file").status_code == 404

    store = SQLiteStore(tmp_path / "lib.sqlite")
    try:
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0, "token_chunks": 0}
        for table in ("windows", "chunks_fts", "segments", "document_screens"):
            (rows,) = store._db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            assert rows == 0, table
        answers = store.answers()
        assert answers and answers[-1].answer["text"]
        report = verify_answers(answers, store, {d.id for d in store.list_documents()})
    finally:
        store.close()
    assert report.ok and report.deleted
    assert {d.doc_id for d in report.deleted} == {doc_id}


@pytest.mark.corpus
def test_bad_files_fail_with_their_reason(client: TestClient, tmp_path: Path) -> None:
    cases = {
        "secret.pdf": ((ROBUSTNESS / "pdfminer-aes-256.pdf").read_bytes(), "encrypted"),
        "broken.pdf": ((ROBUSTNESS / "ocrmypdf-invalid.pdf").read_bytes(), "corrupt"),
        "truncated.pdf": (text_pdf(PUMPS)[:300], "corrupt"),
        "image.pdf": (b"\x89PNG\r\n\x1a\n" + b"\0" * 200, "unsupported"),
    }
    for name, (data, reason) in cases.items():
        job = _upload(client, name, data).json()["jobs"][0]
        ended = _wait(client, job["id"])
        assert ended["state"] == "failed" and ended["reason"] == reason, (name, ended)
        # Named as it was sent, not by the hash it is stored under.
        assert ended["message"].startswith(f"{name} "), ended["message"]
    assert client.get("/api/library").json() == []
    store = SQLiteStore(tmp_path / "lib.sqlite")
    try:
        assert store.counts()["units"] == 0 and store.counts()["chunks"] == 0
    finally:
        store.close()
    incoming = tmp_path / "lib-data" / "uploads" / ".incoming"
    assert list(incoming.iterdir()) == []


def test_limits_answer_413_and_429(tmp_path: Path) -> None:
    small = text_pdf(PUMPS)
    settings = _settings(tmp_path, max_file_bytes=len(small) + 10, files_per_day=2)
    with TestClient(create_app(settings)) as client:
        big = text_pdf(PUMPS * 20)
        response = _upload(client, "big.pdf", big)
        assert response.status_code == 413 and "limit" in response.json()["detail"]
        incoming = tmp_path / "lib-data" / "uploads" / ".incoming"
        assert list(incoming.iterdir()) == []  # the partial file is gone
        assert _upload(client, "a.pdf", small).status_code == 202
        assert _upload(client, "b.pdf", text_pdf(PUMPS[:1])).status_code == 202
        third = _upload(client, "c.pdf", text_pdf(PUMPS[1:]))
        assert third.status_code == 429 and third.json()["limit"] == "files_per_day"
    settings = _settings(tmp_path / "b", bytes_per_user=len(small) + 5)
    with TestClient(create_app(settings)) as client:
        assert _upload(client, "a.pdf", small).status_code == 202
        second = _upload(client, "b.pdf", text_pdf(PUMPS[:1]))
        assert second.status_code == 413 and second.json()["limit"] == "bytes_stored"
        assert client.post("/api/documents", content=b"x").status_code == 400


def test_flagged_upload_shows_in_library(client: TestClient) -> None:
    rule, text = CANARIES["override"]
    pdf = text_pdf([PUMPS[0], text], title="Pump notes")
    done = _wait(client, _upload(client, "n.pdf", pdf).json()["jobs"][0]["id"])
    row = next(d for d in client.get("/api/library").json() if d["id"] == done["doc_id"])
    assert row["contains_instructions"] is True
    assert row["instruction_hits"][0]["rule"] == rule


def test_job_events_stream(client: TestClient) -> None:
    job = _upload(client, "p.pdf", text_pdf(PUMPS)).json()["jobs"][0]
    seen: list[str] = []
    with client.stream("GET", "/api/jobs/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                import json

                states = {j["id"]: j["state"] for j in json.loads(line[6:])["jobs"]}
                seen.append(states[job["id"]])
                if states[job["id"]] in ("done", "failed"):
                    break
    assert seen[-1] == "done" and len(seen) >= 2, seen


def _users(settings: Settings, names: tuple[str, ...]) -> list[dict[str, str]]:
    """Real accounts (``root`` an admin) with an API token each: the Bearer header of each."""
    from truthbase import accounts
    from truthbase.store import SQLiteStore

    store = SQLiteStore(settings.db)
    try:
        headers = []
        for name in names:
            accounts.add_user(store, name, "correct horse battery", admin=name == "root")
            token = accounts.create_token(store, name, "test")
            headers.append({"Authorization": f"Bearer {token.secret}"})
        return headers
    finally:
        store.close()


def test_one_document_per_content_across_users(tmp_path: Path) -> None:
    pdf = text_pdf(PUMPS, title="Harbour pumps")
    settings = _settings(tmp_path)
    ann, bob, carol, root = _users(settings, ("ann", "bob", "carol", "root"))
    with TestClient(create_app(settings)) as client:

        def upload(headers: dict[str, str]) -> dict[str, Any]:
            r = client.post(
                "/api/documents", files={"file": ("p.pdf", pdf, "application/pdf")}, headers=headers
            )
            assert r.status_code == 202, r.text
            job = r.json()["jobs"][0]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                jobs = {j["id"]: j for j in client.get("/api/jobs", headers=headers).json()["jobs"]}
                if jobs[job["id"]]["state"] in ("done", "failed"):
                    return jobs[job["id"]]
                time.sleep(0.2)
            raise AssertionError("job did not end")

        def library(headers: dict[str, str]) -> list[dict[str, Any]]:
            return list(client.get("/api/library", headers=headers).json())

        first = upload(ann)
        doc = first["doc_id"]
        (row,) = library(ann)
        assert row["owner"] == "ann" and row["visibility"] == "private" and row["can_manage"]
        assert library(bob) == [] and library(carol) == []

        second = upload(bob)  # the same bytes, someone else's private copy
        assert second["state"] == "done" and second["doc_id"] == doc
        assert "ann" not in str(second) and "ann" not in str(
            client.get("/api/jobs", headers=bob).json()
        )
        (row,) = library(bob)
        assert row["owner"] == "bob" and row["held"] and not row["can_manage"]
        assert "ann" not in str(library(bob))
        assert library(carol) == []
        assert (
            client.patch(f"/api/documents/{doc}", json={"title": "x"}, headers=bob).status_code
            == 403
        )
        assert client.post(f"/api/documents/{doc}/reingest", headers=bob).status_code == 403
        assert client.delete(f"/api/documents/{doc}", headers=carol).status_code == 404

        assert client.delete(f"/api/documents/{doc}", headers=bob).status_code == 200
        assert library(bob) == [] and len(library(ann)) == 1  # bob let go; ann's stays

        upload(bob)
        assert client.delete(f"/api/documents/{doc}", headers=ann).status_code == 200
        assert library(ann) == []
        (row,) = library(bob)  # ann left it to bob
        assert row["owner"] == "bob" and row["can_manage"] and not row["held"]
        assert client.delete(f"/api/documents/{doc}", headers=bob).status_code == 200
        assert library(bob) == [] and library(root) == []
