"""Hostile input at the doors session 26's review covered, over a one-page index of its own:
each case once cost minutes and a GB, kept a terminal escape or an invisible name, made an
index where a command only reads, or said something other than what was wrong.

* MCP tools: a query, question, quote or claim longer than the web API takes (a 4 MB question
  once ran 240 s and took 1.2 GB) is a tool error at once, as it is at every door.
* Thread titles keep no control or bidirectional control character (an escape sequence in a
  title reached the terminal of ``truthbase threads list``); a title, a collection name, a
  question with nothing visible (a zero-width space) is refused.
* The command line: a command that reads says there is no index (exit 2) and makes neither it
  nor its folder; verify-claim speaks of pages when given a page; the evaluation says why a
  file without an extension is skipped."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from tests.helpers.canaries import text_pdf
from truthbase.app import Service
from truthbase.cli import cli
from truthbase.config import ServerSettings, Settings
from truthbase.embed import Embedder
from truthbase.errors import InvalidInput
from truthbase.eval.golden import load_golden
from truthbase.eval.retrieval import prepare_corpus
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.mcp import http_app
from truthbase.mcp.server import refusal, unreadable
from truthbase.mcp.tools import call_tool
from truthbase.records import MAX_QUESTION_CHARS, MAX_QUOTE_CHARS
from truthbase.server import create_app
from truthbase.store import SQLiteStore

pytestmark = pytest.mark.slow

SENTENCE = "The lighthouse keeper logged every ship that passed the northern cape in the winter."


@dataclass
class Index:
    db: Path
    pdf: Path
    doc_id: str
    service: Service
    client: TestClient


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("doors")
    pdf = root / "keeper.pdf"
    pdf.write_bytes(text_pdf([SENTENCE], title="The Keeper"))
    db = root / "index.sqlite"
    store = SQLiteStore(db)
    try:
        summary = ingest_paths([pdf], store, embedder, IngestOptions())
        [doc] = store.list_documents()
        assert not summary.failed
        settings = Settings(db=db, server=ServerSettings(allowed_hosts=["testserver"]))
        service = Service(store, settings, lambda: embedder)
        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            yield Index(db, pdf, doc.id, service, client)
    finally:
        store.close()


# -- MCP tools: the text arguments are bounded as at the other doors -----------------------------


def _tool(index: Index, name: str, arguments: dict[str, object]) -> tuple[bool, str, float]:
    started = time.monotonic()
    result = call_tool(index.service, name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return bool(result.is_error), text, time.monotonic() - started


@pytest.mark.parametrize(
    ("tool", "arguments", "refused"),
    [
        ("search", {"query": "keeper " * 300_000}, "query"),
        ("ask", {"question": "keeper " * 300_000, "mode": "extractive"}, "question"),
        ("verify_claim", {"page": 1, "quote": "ship " * 700_000, "claim": "a ship"}, "quote"),
        ("verify_claim", {"page": 1, "quote": "ship", "claim": "ship " * 700_000}, "claim"),
    ],
)
def test_an_overlong_text_argument_is_a_tool_error_at_once(
    index: Index, tool: str, arguments: dict[str, object], refused: str
) -> None:
    if tool == "verify_claim":
        arguments = {"doc": index.doc_id, **arguments}
    is_error, text, seconds = _tool(index, tool, arguments)
    assert is_error and f"'{refused}'" in text and "at most" in text, text
    assert seconds < 2, seconds


def test_the_limits_are_the_services_for_every_door(index: Index) -> None:
    with pytest.raises(InvalidInput, match="at most 2,000"):
        index.service.search("k" * (MAX_QUESTION_CHARS + 1))
    with pytest.raises(InvalidInput, match="at most 2,000"):
        index.service.plan_answer("k" * (MAX_QUESTION_CHARS + 1), mode="extractive")
    with pytest.raises(InvalidInput, match="at most 20,000"):
        index.service.verify_claim(index.doc_id, "k" * (MAX_QUOTE_CHARS + 1), "c", page=1)
    # the longest ones taken still answer
    assert index.service.search("keeper " + "k" * (MAX_QUESTION_CHARS - 7))
    is_error, text, _ = _tool(
        index, "verify_claim", {"doc": index.doc_id, "page": 1, "quote": SENTENCE, "claim": "x"}
    )
    assert not is_error, text


def test_a_page_out_of_range_is_named_as_a_page(index: Index) -> None:
    for page in (2, 2**63, 2**64):
        is_error, text, _ = _tool(
            index, "verify_claim", {"doc": index.doc_id, "page": page, "quote": "q", "claim": "c"}
        )
        assert is_error and f"page {page} is out of range" in text and "pages 1..1" in text, text


def test_verify_claim_names_the_page_it_was_given(index: Index) -> None:
    argv = ["--db", str(index.db), "verify-claim", "--doc", index.doc_id[:8]]
    argv += ["--page", str(2**64), "--quote", "q", "--claim", "c"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert f"error: page {2**64} is out of range" in result.stderr, result.stderr
    assert "has pages 1..1" in result.stderr


def _mcp(client: TestClient, body: bytes, session: str | None = None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session is not None:
        headers["mcp-session-id"] = session
    return client.post("/mcp", content=body, headers=headers)


@pytest.fixture(scope="module")
def mcp_http(index: Index) -> Iterator[tuple[TestClient, str]]:
    with TestClient(http_app(index.service), base_url="http://127.0.0.1:8765") as client:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
        opened = _mcp(client, _request(1, "initialize", hello))
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert _mcp(client, json.dumps(initialized).encode(), session).status_code == 202
        yield client, session


def _request(request_id: object, method: str, params: dict[str, object]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


@pytest.mark.parametrize(
    ("body", "reply_id", "why"),
    [
        (_request(1.5, "tools/list", {}), None, "the id of a request is an integer or a string"),
        (_request(None, "tools/list", {}), None, "the id of a request is an integer or a string"),
        (_request(True, "tools/list", {}), None, "the id of a request is an integer or a string"),
        (
            _request({"a": 1}, "tools/list", {}),
            None,
            "the id of a request is an integer or a string",
        ),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search",'
            b'"arguments":{"query":"\\ud800"}}}',
            7,
            "not valid text (a lone surrogate)",
        ),
        (b'{"jsonrpc":"2.0","id":"\\udc80","method":"tools/list"}', None, "lone surrogate"),
        (b'[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]', None, "not a JSON-RPC request"),
        (b'{"jsonrpc":"2.0","id":9}', 9, "not a JSON-RPC request"),
        (b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1]}', 10, "not a JSON-RPC"),
        (b"{not json", None, "the message is not JSON"),
        (
            b'{"jsonrpc":"2.0","id":1,"params":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            None,
            "nests too deeply",
        ),
    ],
)
def test_mcp_http_answers_what_it_cannot_read_with_a_json_rpc_error(
    mcp_http: tuple[TestClient, str], body: bytes, reply_id: object, why: str
) -> None:
    client, session = mcp_http
    response = _mcp(client, body, session)
    assert response.status_code == 400, (response.status_code, response.text)
    reply = response.json()
    assert reply["id"] == reply_id and why in reply["error"]["message"], reply
    assert "validation error" not in reply["error"]["message"].lower(), reply


def test_mcp_http_still_answers_a_real_request(mcp_http: tuple[TestClient, str]) -> None:
    client, session = mcp_http
    response = _mcp(client, _request("a", "tools/list", {}), session)
    assert response.status_code == 200 and '"id":"a"' in response.text, response.text
    big = _request(3, "tools/call", {"name": "search", "arguments": {"query": "k" * 5_000_000}})
    assert _mcp(client, big, session).status_code == 413


def test_stdio_answers_a_request_with_an_id_of_no_usable_type() -> None:
    line = '{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}'
    assert unreadable(line)
    reply = refusal(line)
    assert reply is not None and reply.id is None, reply
    assert reply.error.message == "the id of a request is an integer or a string"
    assert not unreadable('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert not unreadable('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')


# -- titles and names ----------------------------------------------------------------------------


def _new_thread(index: Index) -> str:
    response = index.client.post(
        "/api/chat", json={"question": "What did the \x1b[2Jkeeper log?", "mode": "extractive"}
    )
    assert response.status_code == 200, response.text
    done = [json.loads(line[5:]) for line in response.text.splitlines() if "thread" in line]
    thread: str = done[-1]["thread"]
    return thread


def test_thread_titles_keep_no_control_or_bidi_character(index: Index) -> None:
    thread = _new_thread(index)
    opened = index.client.get(f"/api/threads/{thread}").json()
    assert opened["title"] == "What did the [2Jkeeper log?", opened["title"]
    for sent, kept in [
        ("a\x00b", "a b"),
        ("\x1b]0;owned\x07 notes", "]0;owned notes"),
        ("\u202eevil.pdf", "evil.pdf"),
        ("line\u2028two", "line two"),
    ]:
        response = index.client.patch(f"/api/threads/{thread}", json={"title": sent})
        assert response.status_code == 200 and response.json()["title"] == kept, response.text
    for invisible in ("\x00", "\u200b", "\u202e\u200b", "\x07\t"):
        response = index.client.patch(f"/api/threads/{thread}", json={"title": invisible})
        assert response.status_code == 400, response.text
        assert "title is empty" in response.json()["detail"]


@pytest.mark.parametrize("name", ["\u200b", "\u202eevil", "a\u2066b", "a\x85b", "a\u2028b"])
def test_collection_names_with_nothing_visible_or_bidi_controls_are_4xx(
    index: Index, name: str
) -> None:
    response = index.client.post("/api/collections", json={"name": name, "documents": []})
    assert response.status_code == 400, response.text
    assert "collection name" in response.json()["detail"]
    renamed = index.client.post("/api/collections", json={"name": "plain", "documents": []})
    assert renamed.status_code in (201, 400), renamed.text
    response = index.client.patch("/api/collections/plain", json={"name": name})
    assert response.status_code == 400, response.text


def test_a_question_with_nothing_visible_is_refused(index: Index) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        index.service.plan_answer("\u200b\u200b", mode="extractive")
    with pytest.raises(InvalidInput, match="empty"):
        index.service.search("\u200b")


# -- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["search", "keeper"],
        ["ask", "What did the keeper log?"],
        ["docs"],
        ["export", "--answer", "1", "--out", "{out}"],
        ["threads", "list"],
        ["collections", "list"],
        ["verify-claim", "--doc", "abcd", "--page", "1", "--quote", "q", "--claim", "c"],
    ],
)
def test_a_command_that_reads_makes_no_index(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "missing" / "folder" / "index.sqlite"
    argv = ["--db", str(db), *(a.format(out=tmp_path / "out.html") for a in args)]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, (result.output, result.exception)
    first = result.stderr.strip().splitlines()[0]
    assert first == f"error: no index at {db}: run `truthbase --db PATH ingest ...` first", first
    assert not (tmp_path / "missing").exists()


def test_ingest_still_makes_the_index_and_its_folder(index: Index, tmp_path: Path) -> None:
    db = tmp_path / "new" / "index.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(index.pdf)])
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(cli, ["--db", str(db), "docs", "--json"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 1, listed.output


def test_a_golden_document_without_an_extension_is_skipped_with_a_reason(
    index: Index, tmp_path: Path, embedder: Embedder
) -> None:
    golden = tmp_path / "golden.json"
    document = {"path": "r"}
    question = {"id": "q1", "question": "Who logged ships?", "answerable": False}
    golden.write_text(
        json.dumps({"version": 1, "documents": {"r": document}, "questions": [question]})
    )
    store = SQLiteStore(tmp_path / "eval.sqlite")
    try:
        prepared = prepare_corpus(
            load_golden(golden), tmp_path, store, embedder, Settings().chunking
        )
    finally:
        store.close()
    assert prepared.skipped_documents == {
        "r": "r has no file extension: only .epub, .pdf files are ingested"
    }


def test_stored_text_reaches_the_terminal_as_text(index: Index) -> None:
    """Anyone's comment is printed by `feedback list`, a query's brackets by `search`: an escape
    sequence reached the operator's terminal as is, and "[/bold]" was a MarkupError (exit 1)."""
    asked = index.client.post(
        "/api/chat", json={"question": "What did the keeper log?", "mode": "extractive"}
    )
    done = [json.loads(line[5:]) for line in asked.text.splitlines() if '"answer"' in line]
    answer_id = done[-1]["answer"]["id"]
    comment = "\x1b]0;owned\x07\x1b[31m see [/bold] here \u202eevil"
    report = index.client.post(
        f"/api/answers/{answer_id}/feedback", json={"kind": "down", "comment": comment}
    )
    assert report.status_code == 200, report.text
    wide = {"COLUMNS": "300"}
    listed = CliRunner().invoke(cli, ["--db", str(index.db), "feedback", "list"], env=wide)
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert "\x1b" not in listed.output and "\u202e" not in listed.output, listed.output
    assert "┃ [n] ┃" in listed.output, listed.output  # the header was read as a markup tag
    assert "␛]0;owned␇␛[31m" in listed.output and "[/bold]" in listed.output, listed.output
    argv = ["--db", str(index.db), "search", "keeper [/bold]"]
    found = CliRunner().invoke(cli, argv, env=wide)
    assert found.exit_code == 0 and "[/bold]" in found.output, (found.output, found.exception)


def test_brackets_of_a_page_reach_the_terminal(tmp_path: Path, embedder: Embedder) -> None:
    """A page's square brackets are text, not rich markup: `search` printed
    "\\usepackage[breaklines=true]{listings}" as "\\usepackage{listings}" (the option a question
    about a LaTeX manual asks for, dropped without a word), and `ask` its sources and citations
    the same way, and a title in brackets lost them."""
    latex = (
        r"Load the package with \usepackage[breaklines=true]{listings} so that long lines wrap; "
        r"a class option goes first, as in \documentclass[a4paper]{article}."
    )
    pdf = tmp_path / "listings.pdf"
    pdf.write_bytes(text_pdf([latex], title="[draft] listings [/bold]"))
    db = tmp_path / "index.sqlite"
    store = SQLiteStore(db)
    try:
        assert not ingest_paths([pdf], store, embedder, IngestOptions()).failed
    finally:
        store.close()
    wide = {"COLUMNS": "400"}
    found = CliRunner().invoke(cli, ["--db", str(db), "search", "breaklines listings"], env=wide)
    assert found.exit_code == 0, (found.output, found.exception)
    assert r"\usepackage[breaklines=true]{listings}" in found.output, found.output
    assert "[draft] listings [/bold]" in found.output, found.output
    question = "How do I make listings wrap long lines with breaklines?"
    argv = ["--db", str(db), "ask", "--mode", "extractive", question]
    asked = CliRunner().invoke(cli, argv, env=wide)
    assert asked.exit_code == 0, (asked.output, asked.exception)
    sources = asked.output.split("sources", 1)[1]
    assert sources.count(r"\usepackage[breaklines=true]{listings}") >= 2, asked.output
    assert "[draft] listings [/bold]" in sources, asked.output


def test_an_error_repeats_a_long_value_cut(index: Index) -> None:
    """A 100 KB name came back whole in the error (the terminal, the JSON reply): now cut."""
    name = "n" * 100_000
    removed = CliRunner().invoke(cli, ["--db", str(index.db), "users", "remove", name])
    assert removed.exit_code == 2, removed.output
    assert "100,000 characters" in removed.output and len(removed.output) < 400, removed.output
    deleted = index.client.delete("/api/collections/" + "c" * 60_000)
    assert deleted.status_code == 422 and len(deleted.text) < 400, deleted.text[:300]
    feedback = {"kind": "k" * 100_000}
    sent = index.client.post("/api/answers/1/feedback", json=feedback)
    assert 400 <= sent.status_code < 500 and len(sent.text) < 400, sent.text[:300]
