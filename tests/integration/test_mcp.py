"""`truthbase mcp` driven by the MCP SDK's own client, over stdio and over streamable HTTP, on a
copy of the seed index plus one private PDF of ann's (users ann and bob, API tokens for both).

Over stdio (the operator, who sees everything): the tools are listed with schemas and
descriptions; each tool is called; a golden quote (dev.json) verifies as supported, the same
quote with a number changed is not on the page, and a claim with a number changed is not
supported; errors are tool errors with a message, never a traceback; the documents are
resources. Over HTTP (a real server on 127.0.0.1): no token is a 401; bob's token sees no
passage of ann's private PDF (not in documents, search, passages, claims or resources); ann's
does; search results link to the viewer under ``server.base_url``; ``ask`` counts against the
chat quota."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import indexes
from tests.helpers.corpus import GOLDEN_DEV, ROBUSTNESS, SEED
from truthbase import accounts
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.corpus]

SRC = Path(__file__).resolve().parents[2] / "src"
PASSWORD = "correct horse battery"
BASE_URL = "http://127.0.0.1:8000"
TOOLS = {
    "search",
    "ask",
    "get_passage",
    "verify_claim",
    "list_documents",
    "list_collections",
    "list_threads",
    "open_thread",
    "share_thread",
    "unshare_thread",
    "give_feedback",
    "verify_report",
}


@dataclass
class Index:
    db: Path
    private_doc: str
    private_text: str  # the first words of its first page
    seed_ids: dict[str, str]  # file name -> id
    ann: str  # API tokens
    bob: str


@pytest.fixture(scope="module")
def index(seed_db: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Index:
    db = indexes.use_copy(seed_db, tmp_path_factory.mktemp("mcp") / "mcp.sqlite")
    store = SQLiteStore(db)
    try:
        accounts.add_user(store, "ann", PASSWORD)
        accounts.add_user(store, "bob", PASSWORD)
        outcome = ingest_file(
            ROBUSTNESS / "pdfminer-pagelabels.pdf",
            store,
            embedder,
            IngestOptions(
                chunking=Settings(db=db).chunking, owner=store.user("ann").id, visibility="private"
            ),
        )
        assert outcome.status == "ingested" and outcome.doc_id is not None, outcome
        unit = store.unit(outcome.doc_id, 0)
        assert unit is not None and unit.text.strip()
        ann = accounts.create_token(store, "ann").secret
        bob = accounts.create_token(store, "bob").secret
        seed_ids = {Path(d.path).name: d.id for d in store.list_documents() if d.owner is None}
    finally:
        store.close()
    return Index(db, outcome.doc_id, " ".join(unit.text.split()[:6]), seed_ids, ann, bob)


@pytest.fixture(scope="module")
def golden_quote(index: Index) -> tuple[str, int, str]:
    """(doc id, page, quote): the first dev.json evidence on a seed PDF with a number in it."""
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    seed_names = {p.name for p in SEED.glob("*.pdf")}
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            name = Path(golden["documents"][evidence["doc"]]["path"]).name
            if name in seed_names and evidence.get("page") and re.search(r"\d", evidence["quote"]):
                return index.seed_ids[name], evidence["page"], evidence["quote"]
    pytest.fail("dev.json has no evidence with a number on a seed PDF")


def _changed_number(text: str) -> str:
    match = re.search(r"\d", text)
    assert match is not None
    return text[: match.start()] + str((int(match.group()) + 1) % 10) + text[match.end() :]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith("TRUTHBASE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    return env | extra


def _run(session: Callable[[], Awaitable[Any]]) -> Any:
    """``anyio.run(session)`` on a thread of its own: in the whole suite the browser tests'
    Playwright (sync API) keeps an event loop running on the main thread, where a second one
    cannot start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, session).result()


def _result(call: Any) -> dict[str, Any]:
    assert not call.is_error, call.content[0].text
    data = json.loads(call.content[0].text)
    assert data == call.structured_content
    return dict(data)


def _error(call: Any) -> str:
    assert call.is_error, call
    text = str(call.content[0].text)
    assert "Traceback" not in text and "File " not in text, text
    return text


# -- stdio: the operator ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio(index: Index, golden_quote: tuple[str, int, str]) -> dict[str, Any]:
    """One stdio session: every call the tests below look at, made in one server process."""
    doc_id, page, quote = golden_quote
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "truthbase.cli", "--db", str(index.db), "mcp"],
        env=_env(),
    )
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(params) as client:
            seen["tools"] = (await client.list_tools()).tools
            seen["documents"] = await client.call_tool("list_documents", {})
            seen["search"] = await client.call_tool(
                "search", {"query": "primary audience of the Cybersecurity Framework", "k": 3}
            )
            hit = _result(seen["search"])["results"][0]
            seen["hit"] = hit
            seen["passage"] = await client.call_tool(
                "get_passage",
                {
                    "doc": hit["doc_id"],
                    "unit": hit["unit"],
                    "start": hit["start"],
                    "end": hit["end"],
                },
            )
            claim = {"doc": doc_id[:12], "page": page}
            seen["golden"] = await client.call_tool(
                "verify_claim", claim | {"quote": quote, "claim": quote}
            )
            seen["perturbed_quote"] = await client.call_tool(
                "verify_claim", claim | {"quote": _changed_number(quote), "claim": quote}
            )
            seen["perturbed_claim"] = await client.call_tool(
                "verify_claim", claim | {"quote": quote, "claim": _changed_number(quote)}
            )
            seen["ask"] = await client.call_tool(
                "ask",
                {"question": "Who is the primary audience of the CSF?", "mode": "extractive"},
            )
            seen["unknown_doc"] = await client.call_tool(
                "get_passage", {"doc": "ffffffff", "unit": 0, "start": 0, "end": 4}
            )
            seen["bad_span"] = await client.call_tool(
                "get_passage", {"doc": doc_id, "unit": 0, "start": 5, "end": 10**7}
            )
            seen["both_page_and_unit"] = await client.call_tool(
                "verify_claim", claim | {"unit": 0, "quote": quote, "claim": quote}
            )
            seen["resources"] = (await client.list_resources()).resources
            uri = f"truthbase://documents/{index.private_doc}"
            seen["resource"] = await client.read_resource(uri)

    _run(session)
    return seen


def test_stdio_lists_the_tools_with_schemas_and_descriptions(stdio: dict[str, Any]) -> None:
    tools = {t.name: t for t in stdio["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
    assert tools["verify_claim"].input_schema["required"] == ["doc", "quote", "claim"]


def test_stdio_is_the_operator_and_sees_every_document(stdio: dict[str, Any], index: Index) -> None:
    ids = {d["doc_id"] for d in _result(stdio["documents"])["documents"]}
    assert ids == set(index.seed_ids.values()) | {index.private_doc}
    assert {str(r.uri) for r in stdio["resources"]} == {f"truthbase://documents/{i}" for i in ids}
    meta = json.loads(stdio["resource"].contents[0].text)
    assert meta["doc_id"] == index.private_doc and meta["visibility"] == "private"


def test_stdio_search_and_get_passage_agree(stdio: dict[str, Any]) -> None:
    results = _result(stdio["search"])["results"]
    assert len(results) == 3 and [r["rank"] for r in results] == [1, 2, 3]
    hit = stdio["hit"]
    assert hit["tag"] == f"[f{hit['unit']}-{hit['start']}-{hit['end']}]"
    assert hit["page"] == hit["unit"] + 1 and "viewer_url" not in hit  # no base URL set
    passage = _result(stdio["passage"])
    assert passage["text"] == hit["text"] and passage["tag"] == hit["tag"]
    assert passage["rects"] and all(len(r) == 4 for r in passage["rects"])


def test_stdio_verify_claim_golden_supported_perturbed_not(stdio: dict[str, Any]) -> None:
    golden = _result(stdio["golden"])
    assert golden["state"] == "supported" and golden["found"], golden
    assert golden["rects"] and golden["tag"].startswith(f"[f{golden['unit']}-")
    moved = _result(stdio["perturbed_quote"])
    assert moved["state"] == "unverified" and not moved["found"]
    assert [r["code"] for r in moved["reasons"]] == ["quote_not_found"]
    claim = _result(stdio["perturbed_claim"])
    assert claim["state"] == "quote_only" and claim["found"], claim
    assert claim["reasons"]


def test_stdio_ask_answers_with_citation_states(stdio: dict[str, Any]) -> None:
    answer = _result(stdio["ask"])
    assert answer["answerer"] == "extractive" and not answer["refused"], answer
    assert answer["citations"] and answer["sources"]
    assert {c["state"] for c in answer["citations"]} <= {"supported", "quote_only", "unverified"}
    assert any(c["state"] == "supported" for c in answer["citations"])
    assert isinstance(answer["answer_id"], int)


def test_stdio_errors_are_tool_errors_with_a_message(stdio: dict[str, Any]) -> None:
    assert "no document ffffffff" in _error(stdio["unknown_doc"])
    assert "outside unit 0" in _error(stdio["bad_span"])
    assert "exactly one of page" in _error(stdio["both_page_and_unit"])


# -- streamable HTTP: tokens -------------------------------------------------------------------


def test_stdio_answers_lines_the_sdk_cannot_read_and_goes_on(index: Index) -> None:
    """The SDK's stdio reader dropped a line it could not read (a lone surrogate in a string,
    not JSON, a wrong shape) without a reply: the client waited for ever. Each gets a JSON-RPC
    error now (its id when it has one), a notification nothing, and the next call its answer;
    an answer id no row can have is a tool error, not an internal one."""
    command = [sys.executable, "-m", "truthbase.cli", "--db", str(index.db), "mcp"]
    env = os.environ | _env()
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        replies = process.stdout

        def send(line: str) -> None:
            assert process.stdin is not None
            process.stdin.write(line.encode() + b"\n")
            process.stdin.flush()

        reader = ThreadPoolExecutor(max_workers=1)

        def reply() -> dict[str, Any]:  # a reply that never comes fails the test, not hangs it
            return dict(json.loads(reader.submit(replies.readline).result(timeout=60)))

        try:
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
            hello["clientInfo"] = {"name": "test", "version": "1"}
            send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
            assert reply()["id"] == 1
            send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            search = '"name": "search", "arguments": {"query": "\\ud800"}'
            send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {' + search + "}}")
            surrogate = reply()
            assert surrogate["id"] == 2 and "lone surrogate" in surrogate["error"]["message"]
            send('{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}')
            send("not JSON")
            assert reply() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "the message is not JSON"},
            }
            send('{"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": [1, 2]}')
            shape = reply()
            assert shape["id"] == "x" and shape["error"]["code"] == -32600, shape
            feedback = {"name": "give_feedback", "arguments": {"answer_id": 2**64, "kind": "up"}}
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": feedback}
            send(json.dumps(call))
            result = reply()["result"]
            assert result["isError"] and "no answer" in result["content"][0]["text"], result
            send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
            listed = reply()
            assert listed["id"] == 4 and {t["name"] for t in listed["result"]["tools"]} == TOOLS
        finally:
            process.kill()  # EOF on its stdout ends a read still waiting
            process.wait(timeout=30)
            reader.shutdown()


@pytest.fixture(scope="module")
def http_url(index: Index) -> Iterator[str]:
    command = [
        sys.executable, "-m", "truthbase.cli", "--db", str(index.db), "mcp", "--http",
        "--port", "0",
    ]  # fmt: skip
    env = os.environ | _env(
        TRUTHBASE_SERVER__BASE_URL=BASE_URL, TRUTHBASE_QUOTA__PER_CLIENT_PER_MINUTE="1"
    )
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
            assert match, line
            url = f"http://127.0.0.1:{match.group(1)}/mcp"
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.post(url, json={}, timeout=2)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the MCP server did not answer"
                    time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


def _as(url: str, token: str, calls: Callable[[Client], Awaitable[Any]]) -> Any:
    async def session() -> Any:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await calls(client)

    return _run(session)


def test_http_without_a_token_is_401(http_url: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer tb_not-a-token"}):
        response = httpx.post(http_url, json=initialize, headers=headers, timeout=10)
        assert response.status_code == 401, response.text
        assert "Bearer TOKEN" in response.json()["detail"]


def test_http_a_user_without_access_gets_no_passage(http_url: str, index: Index) -> None:
    private = index.private_doc

    async def calls(client: Client) -> dict[str, Any]:
        return {
            "tools": (await client.list_tools()).tools,
            "documents": await client.call_tool("list_documents", {}),
            "search": await client.call_tool("search", {"query": index.private_text, "k": 20}),
            "scoped": await client.call_tool("search", {"query": "page", "doc": private}),
            "passage": await client.call_tool(
                "get_passage", {"doc": private, "unit": 0, "start": 0, "end": 10}
            ),
            "claim": await client.call_tool(
                "verify_claim",
                {"doc": private, "unit": 0, "quote": index.private_text, "claim": "x y"},
            ),
            "resources": (await client.list_resources()).resources,
        }

    bob = _as(http_url, index.bob, calls)
    assert {t.name for t in bob["tools"]} == TOOLS
    ids = {d["doc_id"] for d in _result(bob["documents"])["documents"]}
    assert ids == set(index.seed_ids.values())
    hits = _result(bob["search"])["results"]
    assert hits and private not in {h["doc_id"] for h in hits}
    assert all(h["viewer_url"].startswith(f"{BASE_URL}/view?doc=") for h in hits)
    for name in ("scoped", "passage", "claim"):
        assert f"no document {private}" in _error(bob[name]), name
    assert f"truthbase://documents/{private}" not in {str(r.uri) for r in bob["resources"]}

    ann = _as(http_url, index.ann, calls)
    assert private in {d["doc_id"] for d in _result(ann["documents"])["documents"]}
    passage = _result(ann["passage"])
    assert passage["doc_id"] == private and passage["tag"] == "[f0-0-10]"
    assert passage["viewer_url"] == f"{BASE_URL}/view?doc={private}&page=1&start=0&end=10"
    assert private in {h["doc_id"] for h in _result(ann["search"])["results"]}


def test_http_ask_counts_against_the_chat_quota(http_url: str, index: Index) -> None:
    async def calls(client: Client) -> list[Any]:
        question = {"question": "What are the six CSF Functions?", "mode": "extractive"}
        return [await client.call_tool("ask", question) for _ in range(2)]

    first, second = _as(http_url, index.ann, calls)
    assert _result(first)["citations"]
    assert _error(second).startswith("quota exceeded: try again in ")


def test_http_agent_mode_is_for_admins_as_on_the_web_app(http_url: str, index: Index) -> None:
    # server.agent_mode defaults to "admins": bob is none (the same rule as POST /api/chat).
    async def calls(client: Client) -> Any:
        return await client.call_tool("ask", {"question": "What is CSF?", "mode": "agent"})

    assert "agent mode is for admins" in _error(_as(http_url, index.bob, calls))


def test_http_on_a_public_address_without_users_is_refused(seed_db: Path) -> None:
    from click.testing import CliRunner

    from truthbase.cli import cli

    args = ["--db", str(seed_db), "mcp", "--http", "--host", "0.0.0.0", "--port", "0"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "refusing to serve MCP on 0.0.0.0 with no user" in result.stderr
