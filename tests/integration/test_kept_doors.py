"""The doors of issue 26 that the HTTP API had alone, over the seed index on both backends (a real
SQLite file and a real PostgreSQL, tests/helpers/pg_server.py): `truthbase threads` (list, search,
show with each citation checked again, rename, delete, exit 2 for an unknown id); the MCP tools
over threads, shares, feedback and report re-checks, with the HTTP API's access rules (another
user's thread is NotFound, a link is a signed-in user's, a report is re-checked by those who see
every document); and POST /api/reports/verify (the re-check of `verify --report`, of an HTML or
a Markdown export; 413, 415, 422 and 403 with a sentence). Last in the module, a cited page
changes and both doors say so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers.pg_server import BACKENDS
from tests.helpers.sites import Site, login, open_site
from truthbase.app import Service
from truthbase.app.exports import MAX_REPORT_BYTES
from truthbase.cli import cli
from truthbase.embed import Embedder
from truthbase.mcp.tools import call_tool
from truthbase.people import Viewer
from truthbase.store import Store

pytestmark = [pytest.mark.slow]

FIRST = "How does RAPTOR segment the retrieval corpus before building its tree?"
FOLLOW_UP = "What are they embedded with?"
OTHER = "Which CSF 2.0 subcategory covers risk appetite and risk tolerance statements?"
UNKNOWN = "f" * 32


@dataclass
class Doors:
    site: Site
    store: Store
    operator: Service

    def as_user(self, name: str) -> Service:
        user = self.store.user(name)
        assert user is not None
        return self.operator.for_viewer(Viewer(user=name, user_id=user.id, admin=user.admin))

    def cli(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            cli, [*self.site.cli_args, *args], env=self.site.cli_env, catch_exceptions=False
        )
        return result.exit_code, result.output


@pytest.fixture(scope="module", params=BACKENDS)
def doors(
    request: pytest.FixtureRequest,
    seed_db: Path,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
) -> Iterator[Doors]:
    folder = tmp_path_factory.mktemp(f"kept-doors-{request.param}")
    users = (("ann", False), ("bob", False), ("root", True))
    with open_site(request.param, seed_db, folder, users) as site:
        store = site.store()
        try:
            yield Doors(site, store, Service(store, site.settings, lambda: embedder))
        finally:
            store.close()


def _tool(service: Service, name: str, **arguments: Any) -> dict[str, Any]:
    result = call_tool(service, name, arguments)
    assert not result.is_error and result.structured_content is not None, result.content
    return dict(result.structured_content)


def _tool_error(service: Service, name: str, **arguments: Any) -> str:
    result = call_tool(service, name, arguments)
    assert result.is_error, result.structured_content
    return str(result.content[0].text)  # type: ignore[union-attr]


def _ask(service: Service, question: str, **more: Any) -> dict[str, Any]:
    return _tool(service, "ask", question=question, mode="extractive", **more)


# -- truthbase threads -------------------------------------------------------------------------


def test_the_threads_command_lists_searches_shows_renames_and_deletes(doors: Doors) -> None:
    # The command line's user is the operator: its threads are the local user's, as the MCP
    # server's over stdio keeps them.
    first = _ask(doors.operator, FIRST, new_thread=True)
    thread_id = first["thread"]
    _ask(doors.operator, FOLLOW_UP, thread=thread_id)
    other = _ask(doors.operator, OTHER, new_thread=True)["thread"]
    ann = _ask(doors.as_user("ann"), FIRST, new_thread=True)["thread"]  # not the CLI's

    code, out = doors.cli("threads", "list", "--json")
    assert code == 0, out
    listed = json.loads(out)["threads"]
    assert [t["id"] for t in listed] == [other, thread_id]  # newest first, ann's apart
    assert listed[1]["turns"] == 2 and listed[1]["title"] == FIRST
    code, out = doors.cli("threads", "list", "--search", "raptor EMBEDDED", "--json")
    assert code == 0 and [t["id"] for t in json.loads(out)["threads"]] == [thread_id], out
    code, out = doors.cli("threads", "list", "--search", "embedde", "--json")
    assert code == 0 and [t["id"] for t in json.loads(out)["threads"]] == [thread_id], out
    code, out = doors.cli("threads", "list", "--search", "mbedded", "--json")
    assert code == 0 and json.loads(out)["threads"] == [], out  # the starts of words only
    code, out = doors.cli("threads", "list")
    assert code == 0 and "2 threads" in out and thread_id in out, out

    code, out = doors.cli("threads", "show", thread_id, "--json")
    assert code == 0, out
    shown = json.loads(out)
    assert [t["question"] for t in shown["turns"]] == [FIRST, FOLLOW_UP]
    assert shown["turns"][0]["answer_id"] == first["answer_id"]
    citations = shown["turns"][0]["answer"]["citations"]
    assert citations and {c["recheck"]["state"] for c in citations} <= {"current", "unchecked"}
    assert any(c["recheck"]["state"] == "current" for c in citations), citations
    code, out = doors.cli("threads", "show", thread_id)
    assert code == 0, out
    assert f"Q1: {FIRST}" in out and f"Q2: {FOLLOW_UP}" in out and "CURRENT doc" in out
    assert "searched for:" in out  # the follow-up says what it was searched as

    code, out = doors.cli("threads", "rename", other, "  Risk   appetite ")
    assert code == 0 and "Risk appetite" in out, out
    assert doors.operator.thread(other).info.title == "Risk appetite"
    code, out = doors.cli("threads", "delete", other)
    assert code == 0, out
    assert [t.id for t in doors.operator.threads()] == [thread_id]

    for args in (("show", UNKNOWN), ("rename", UNKNOWN, "x"), ("delete", other), ("show", ann)):
        code, out = doors.cli("threads", *args)
        assert code == 2, (args, out)
        assert f"error: no thread {args[1]}" in out, out
    code, out = doors.cli("threads", "rename", thread_id, "   ")
    assert code == 2 and "title is empty" in out, out
    code, out = doors.cli("threads", "list", "--search", " ".join(["w"] * 11))
    assert code == 2 and "at most 10 words" in out, out


# -- the MCP tools ----------------------------------------------------------------------------


def test_mcp_threads_are_their_owners_and_open_with_each_citation_checked(doors: Doors) -> None:
    ann, bob = doors.as_user("ann"), doors.as_user("bob")
    first = _ask(ann, FIRST, new_thread=True)
    thread_id = first["thread"]
    _ask(ann, OTHER, thread=thread_id)

    listed = _tool(ann, "list_threads")["threads"]
    assert listed[0]["id"] == thread_id and listed[0]["turns"] == 2
    assert [t["id"] for t in _tool(ann, "list_threads", search="appetite raptor")["threads"]] == [
        thread_id
    ]
    assert _tool(ann, "list_threads", search="zebras")["threads"] == []
    assert _tool(bob, "list_threads")["threads"] == []

    opened = _tool(ann, "open_thread", thread=thread_id)
    assert [t["question"] for t in opened["turns"]] == [FIRST, OTHER]
    citations = opened["turns"][0]["answer"]["citations"]
    assert citations and all("rects" not in c and "recheck" in c for c in citations)
    assert any(c["recheck"]["state"] == "current" for c in citations), citations
    sources = opened["turns"][0]["answer"]["sources"]
    assert sources and all("rects" not in s and "chunk_id" not in s for s in sources)

    root = doors.as_user("root")
    for other in (bob, root):  # an admin sees counts, never contents
        error = _tool_error(other, "open_thread", thread=thread_id)
        assert error == f"NotFound: no thread {thread_id}"
    assert "pattern" in _tool_error(ann, "open_thread", thread="../etc")
    assert "takes no argument 'q'" in _tool_error(ann, "list_threads", q="x")


def test_mcp_share_and_unshare_follow_the_http_rules(doors: Doors) -> None:
    ann, bob = doors.as_user("ann"), doors.as_user("bob")
    thread_id = _ask(ann, FIRST, new_thread=True)["thread"]
    share = _tool(ann, "share_thread", thread=thread_id)
    token = share["token"]
    assert share["thread"] == thread_id and share["url"] == f"/?shared={token}"
    assert _tool(ann, "share_thread", thread=thread_id)["token"] == token  # the open one again
    assert _tool_error(bob, "share_thread", thread=thread_id).startswith("NotFound")
    assert _tool_error(bob, "unshare_thread", thread=thread_id).startswith("NotFound")

    client = doors.site.client
    bob_http = login(client, "bob")
    opened = client.get(f"/api/shared/{token}", headers=bob_http)
    assert opened.status_code == 200, opened.text
    assert opened.json()["turns"][0]["question"] == FIRST
    assert _tool(ann, "unshare_thread", thread=thread_id) == {"thread": thread_id, "revoked": True}
    assert client.get(f"/api/shared/{token}", headers=bob_http).status_code == 404

    # over stdio the caller is the operator: its threads are the local user's, and a link opens
    # for signed-in users only, so there is no one to share them with
    local = _ask(doors.operator, OTHER, new_thread=True)["thread"]
    refused = _tool_error(doors.operator, "share_thread", thread=local)
    assert refused.startswith("Forbidden: a thread is shared by a signed-in user"), refused


def test_mcp_feedback_on_an_answer_and_a_citation(doors: Doors) -> None:
    ann, bob = doors.as_user("ann"), doors.as_user("bob")
    answer = _ask(ann, FIRST)
    answer_id, n = answer["answer_id"], answer["citations"][0]["n"]
    up = _tool(ann, "give_feedback", answer_id=answer_id, kind="up")
    assert (up["kind"], up["citation"], up["user"]) == ("up", 0, "ann")
    wrong = _tool(
        ann, "give_feedback", answer_id=answer_id, kind="wrong_passage", citation=n, comment="no"
    )
    assert (wrong["citation"], wrong["comment"]) == (n, "no")
    down = _tool(ann, "give_feedback", answer_id=answer_id, kind="down")  # replaces the up
    assert down["kind"] == "down"

    listed = doors.site.client.get("/api/feedback", headers=login(doors.site.client, "ann"))
    mine = [r for r in listed.json()["reports"] if r["answer_id"] == answer_id]
    assert sorted(r["kind"] for r in mine) == ["down", "wrong_passage"]

    error = _tool_error(bob, "give_feedback", answer_id=answer_id, kind="up")
    assert error == f"NotFound: no answer {answer_id}"
    assert "has no citation [99]" in _tool_error(
        ann, "give_feedback", answer_id=answer_id, kind="wrong_passage", citation=99
    )
    assert "'kind'" in _tool_error(ann, "give_feedback", answer_id=answer_id, kind="meh")
    assert "'comment'" in _tool_error(
        ann, "give_feedback", answer_id=answer_id, kind="up", comment="x" * 2001
    )


@dataclass
class Report:
    html: str
    markdown: str
    citation: dict[str, Any]


@pytest.fixture(scope="module")
def report(doors: Doors) -> Report:
    answer = _ask(doors.operator, "How does the AI RMF define risk?")
    ids = [answer["answer_id"]]
    html = doors.operator.export_answers(ids, "html").content
    markdown = doors.operator.export_answers(ids, "md").content
    held = [c for c in answer["citations"] if c["state"] in ("supported", "quote_only")]
    assert held, answer
    return Report(html, markdown, held[0])


def test_mcp_verify_report_rechecks_for_those_who_see_everything(
    doors: Doors, report: Report
) -> None:
    checked = _tool(doors.operator, "verify_report", report=report.html)
    assert checked["ok"] is True and checked["answers"] == 1 and checked["checked_citations"] >= 1
    assert _tool(doors.operator, "verify_report", report=report.markdown) == checked
    assert _tool(doors.as_user("root"), "verify_report", report=report.html)["ok"] is True
    refused = _tool_error(doors.as_user("ann"), "verify_report", report=report.html)
    assert refused.startswith("Forbidden: re-checking a report is for those who see every")
    not_one = _tool_error(doors.operator, "verify_report", report="<html>hello</html>")
    assert not_one.startswith("InvalidInput: no TruthBase evidence in this file"), not_one
    too_big = _tool_error(doors.operator, "verify_report", report="x" * (MAX_REPORT_BYTES + 1))
    assert "'report'" in too_big and "at most" in too_big


def test_the_admin_page_has_the_thread_counts_and_no_one_else_gets_it(doors: Doors) -> None:
    client = doors.site.client
    page = client.get("/admin", headers=login(client, "root"))
    assert page.status_code == 200
    assert 'id="thread-rows"' in page.text and 'src="/js/admin-threads.js"' in page.text
    script = client.get("/js/admin-threads.js")
    assert script.status_code == 200 and 'fetch("/api/admin/threads")' in script.text
    assert client.get("/admin", headers=login(client, "ann")).status_code == 403


# -- POST /api/reports/verify -------------------------------------------------------------------


def test_the_report_route_rechecks_and_refuses_bad_input_with_a_sentence(
    doors: Doors, report: Report
) -> None:
    client = doors.site.client
    root, ann = login(client, "root"), login(client, "ann")
    url = "/api/reports/verify"
    html = {"Content-Type": "text/html; charset=utf-8"}
    ok = client.post(url, content=report.html.encode(), headers={**root, **html})
    assert ok.status_code == 200, ok.text
    assert ok.json()["ok"] is True and ok.json()["problems"] == []

    forbidden = client.post(url, content=report.html.encode(), headers={**ann, **html})
    assert forbidden.status_code == 403 and "every document" in forbidden.json()["detail"]
    wrong_type = client.post(url, content=b"{}", headers={**root, "Content-Type": "image/png"})
    assert wrong_type.status_code == 415 and "text/html" in wrong_type.json()["detail"]
    not_utf8 = client.post(url, content=b"\xff\xfe<html>", headers={**root, **html})
    assert not_utf8.status_code == 422 and "not UTF-8" in not_utf8.json()["detail"]
    not_a_report = client.post(url, content=b"<html>hi</html>", headers={**root, **html})
    assert not_a_report.status_code == 422, not_a_report.text
    assert "no TruthBase evidence" in not_a_report.json()["detail"]
    # the Markdown export carries the same evidence, out of sight: it re-checks alike
    markdown = client.post(
        url, content=report.markdown.encode(), headers={**root, "Content-Type": "text/markdown"}
    )
    assert markdown.status_code == 200, markdown.text
    assert markdown.json() == ok.json()

    chunk = b"x" * (1 << 20)
    chunks = (chunk for _ in range(MAX_REPORT_BYTES // len(chunk) + 1))
    too_big = client.post(url, content=chunks, headers={**root, **html})  # no length: streamed
    assert too_big.status_code == 413 and "larger than" in too_big.json()["detail"]


def test_a_changed_page_no_longer_holds_at_either_door(doors: Doors, report: Report) -> None:
    """Last in the module: it changes a cited page."""
    cited = report.citation
    doors.site.change_unit_text(cited["doc_id"], cited["unit"], cited["start"], cited["end"])
    client = doors.site.client
    response = client.post(
        "/api/reports/verify",
        content=report.html.encode(),
        headers={**login(client, "root"), "Content-Type": "text/html"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is False
    assert any(p["doc_id"] == cited["doc_id"] and p["n"] == cited["n"] for p in body["problems"]), (
        body
    )
    over_mcp = _tool(doors.operator, "verify_report", report=report.markdown)
    assert over_mcp["problems"] == body["problems"]
