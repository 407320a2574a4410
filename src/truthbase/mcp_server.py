"""``truthbase mcp``: the index as a Model Context Protocol server, for agents.

Built on the official MCP Python SDK's low-level :class:`mcp.server.Server`, so that every tool's
JSON schema and description are written here, for a model, and every error is ours to phrase.
The tools are a thin shell over the Python API (:class:`truthbase.api.Library`): ``search``,
``ask``, ``get_passage``, ``verify_claim`` (the one :func:`truthbase.cite.verify.verify_claim`
the CLI runs) and ``list_documents``; each document's metadata is a resource
(``truthbase://documents/{id}``).

Who asks decides what they see (:mod:`truthbase.access`, through the library's viewer):

* over stdio the caller is whoever started the process: the operator, who sees every document,
  as at the command line;
* over streamable HTTP (``--http``, 127.0.0.1 by default) an index with users needs an API token
  (``truthbase tokens create``) as ``Authorization: Bearer TOKEN`` on every request: without a
  valid one the request is answered 401 before MCP sees it, and each tool call acts as the
  token's user, re-checked on each call (a revoked token stops at once). An index without users
  on a loopback address serves the single local user, as ``truthbase serve`` does
  (:func:`truthbase.server.auth.accounts_required` decides for both).

``ask`` over HTTP is admitted by the chat quota (``quota.*``) before any model call, counted as
``POST /api/chat`` counts it (:func:`admit_ask`).

Errors: a :class:`~truthbase.errors.TruthBaseError` (an unknown or hidden document, a span out of
range, a bad argument) is an MCP tool error whose text is its message; anything else is a bug,
logged with its traceback and answered as the tool error ``internal error``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .accounts import token_viewer
from .answer.model import CitationsEvent, DoneEvent, ErrorEvent, SourcesEvent
from .api import Library, viewer_url
from .config import DEFAULT_K
from .errors import InvalidInput, TruthBaseError
from .model import DocumentInfo
from .quota import client_key_for, retry_after_header
from .records import CHAT_MODES, OPERATOR, SearchHit, Viewer
from .server.auth import accounts_required
from .server.hardening import ERROR_MESSAGE, privileged, redact_event
from .server.quota import client_key, quota_limits

__all__ = [
    "RESOURCE_PREFIX",
    "TOOLS",
    "McpAuthError",
    "TokenGate",
    "admit_ask",
    "create_server",
    "http_app",
    "run_stdio",
]

logger = logging.getLogger(__name__)

#: The URI of a document's metadata resource is this prefix and the document id.
RESOURCE_PREFIX = "truthbase://documents/"

_DOC_TEXT = (
    "Document id (the doc_id of list_documents or search), or a unique prefix of at least 4 "
    "characters."
)
_DOC: dict[str, Any] = {"type": "string", "minLength": 4, "description": _DOC_TEXT}

#: The tools, as a model sees them: a name, what it is for, and its arguments' JSON schema.
TOOLS: tuple[types.Tool, ...] = (
    types.Tool(
        name="search",
        description=(
            "Search the user's documents (PDFs and EPUB books) for passages relevant to a query: "
            "hybrid full-text and semantic ranking. Returns the best passages first, each with "
            "its document (doc_id, title), unit (0-based page or EPUB section) and 1-based page, "
            "the character span [start, end) of the passage in that unit's text, its position "
            "tag [f{unit}-{start}-{end}], its text and, when configured, a viewer_url that opens "
            "the document on the highlighted passage. Use it to find evidence; quote passages "
            "verbatim and check claims with verify_claim."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What to look for: a question or keywords.",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "default": DEFAULT_K,
                    "description": "How many passages to return.",
                },
                "doc": {**_DOC, "description": "Only search this document. " + _DOC_TEXT},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="ask",
        description=(
            "Answer a question from the user's documents, with numbered citations. Returns the "
            "answer text with [n] markers, whether it was refused (the documents do not support "
            "an answer), and each citation: the source n, document, page, span, the exact quote "
            "and its state: 'supported' (the quote is on the page and supports the claim), "
            "'quote_only' (on the page, support not shown) or 'unverified'. Only 'supported' "
            "citations are verified evidence."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 1, "description": "The question."},
                "mode": {
                    "type": "string",
                    "enum": list(CHAT_MODES),
                    "default": "auto",
                    "description": "Who answers: 'extractive' (verbatim sentences, no model), "
                    "'llm' (the configured chat model), 'agent' (the model reads the book's "
                    "table of contents and sections first), 'auto' (llm when one is configured, "
                    "else extractive).",
                },
                "doc": {
                    **_DOC,
                    "description": "Only answer from this document. " + _DOC_TEXT,
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=False, idempotent_hint=False),
    ),
    types.Tool(
        name="get_passage",
        description=(
            "Read an exact span of a document: the text of characters [start, end) of unit "
            "'unit' (0-based page of a PDF, or section of an EPUB), with its 1-based page, page "
            "label, rectangles (PDF points, one per rendered line) and position tag. Use it to "
            "read around a search result (widen start and end) or to show a cited passage."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "doc": _DOC,
                "unit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "0-based unit: page - 1 for a PDF, the section for an EPUB.",
                },
                "start": {"type": "integer", "minimum": 0, "description": "First character."},
                "end": {"type": "integer", "minimum": 0, "description": "End (exclusive)."},
            },
            "required": ["doc", "unit", "start", "end"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="verify_claim",
        description=(
            "Check a citation: is 'quote' on the given page of the document, and does it "
            "support 'claim'? Deterministic checks: every number, date and percentage of the "
            "claim must be in the quote, the negation must agree, the claim's named terms and "
            "enough of its content words must be there, and the meaning must be similar. "
            "Returns state 'supported', 'quote_only' (the quote is on the page but does not "
            "support the claim) or 'unverified' (the quote is not on that page), where the "
            "quote is (span, rects, tag) and each failed check as a reason. Give page (1-based, "
            "PDFs) or unit (0-based, PDFs and EPUB sections), not both."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "doc": _DOC,
                "page": {"type": "integer", "minimum": 1, "description": "1-based PDF page."},
                "unit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "0-based unit (a PDF page - 1, or an EPUB section).",
                },
                "quote": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The passage, verbatim as on the page.",
                },
                "claim": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The statement the quote is cited for.",
                },
            },
            "required": ["doc", "quote", "claim"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="list_documents",
        description=(
            "List the documents you may read: id, title, kind (pdf or epub), number of units "
            "(pages or sections), language, owner and visibility. Use a doc_id from here in "
            "the other tools."
        ),
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
)


class McpAuthError(TruthBaseError):
    """An HTTP request without a valid API token to an index that has users."""


# -- arguments -----------------------------------------------------------------------------------


def _text(args: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"argument {name!r} is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"argument {name!r} must be a non-empty string")
    return value


def _int(
    args: Mapping[str, Any],
    name: str,
    *,
    default: int | None = None,
    low: int = 0,
    high: int | None = None,
) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"argument {name!r} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        top = "" if high is None else f"..{high}"
        raise InvalidInput(f"argument {name!r} must be in {low}{top}, got {value}")
    return value


def _check_names(tool: str, args: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    unknown = sorted(set(args) - set(schema.get("properties", {})))
    if unknown:
        raise InvalidInput(f"{tool} takes no argument {', '.join(map(repr, unknown))}")


# -- results -------------------------------------------------------------------------------------


def document_json(info: DocumentInfo) -> dict[str, Any]:
    """A document's metadata (its resource, and one row of list_documents)."""
    return {
        "doc_id": info.id,
        "title": info.title,
        "kind": info.kind,
        "units": info.unit_count,
        "pages": info.unit_count if info.kind == "pdf" else None,
        "chunks": info.chunk_count,
        "language": info.language,
        "owner": info.owner_name,
        "visibility": info.visibility,
        "ingested_at": info.ingested_at,
        "contains_instructions": info.flagged,
        "uri": RESOURCE_PREFIX + info.id,
    }


def _hit_json(
    hit: SearchHit, rank: int, kinds: Mapping[str, str], base_url: str | None
) -> dict[str, Any]:
    from .cite.tags import format_tag

    c = hit.chunk
    row: dict[str, Any] = {
        "rank": rank,
        "doc_id": c.doc_id,
        "title": hit.document_title,
        "unit": c.unit,
        "page": c.unit + 1,
        "label": hit.page_label,
        "start": c.start,
        "end": c.end,
        "tag": format_tag(c.unit, c.start, c.end),
        "score": round(hit.score, 6),
        "kind": c.kind,
        "text": c.text,
    }
    if c.context:
        row["context"] = c.context
    if base_url:
        row["viewer_url"] = viewer_url(
            base_url, kinds.get(c.doc_id, "pdf"), c.doc_id, c.unit, c.start, c.end
        )
    return row


# -- the tools -----------------------------------------------------------------------------------


def _search(library: Library, args: Mapping[str, Any]) -> dict[str, Any]:
    query = _text(args, "query") or ""
    k = _int(args, "k", default=DEFAULT_K, low=1, high=50)
    hits = library.search(query, k=k, doc=_text(args, "doc", required=False))
    kinds = {d.id: d.kind for d in library.documents()}
    base = library.settings.server.base_url
    return {
        "query": query,
        "results": [_hit_json(h, i, kinds, base) for i, h in enumerate(hits, 1)],
    }


def _ask(library: Library, args: Mapping[str, Any]) -> dict[str, Any]:
    question = _text(args, "question") or ""
    mode = _text(args, "mode", required=False)
    doc = _text(args, "doc", required=False)
    sources: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    # As on the web app (server.hardening): agent mode may be for admins only, and only an
    # admin (or the operator over stdio) sees model endpoints and provider errors.
    shown_all = privileged(library.viewer)
    if mode == "agent" and library.settings.server.agent_mode == "admins" and not shown_all:
        raise InvalidInput("agent mode is for admins here (server.agent_mode)")
    for event in library.ask(question, mode=mode, doc=doc):
        if isinstance(event, ErrorEvent):
            if not shown_all:
                logger.warning("ask failed at %s (hidden): %s", event.stage, event.message)
            message = event.message if shown_all else ERROR_MESSAGE
            raise InvalidInput(f"the answer failed at {event.stage}: {message}")
        if isinstance(event, SourcesEvent):
            sources = [
                {k: v for k, v in s.to_json().items() if k not in ("rects", "chunk_id")}
                for s in event.sources
            ]
        elif isinstance(event, CitationsEvent):
            citations = [
                {k: v for k, v in c.to_json().items() if k != "rects"} for c in event.citations
            ]
        elif isinstance(event, DoneEvent):
            answer = event.answer
            out = {
                "answer": answer.text,
                "refused": answer.refused,
                "outcome": answer.outcome,
                "answerer": answer.answerer,
                "citations": citations,
                "sources": sources,
                "problems": list(answer.problems),
                "answer_id": answer.id,
            }
            return out if shown_all else redact_event("done", out)
    raise InvalidInput("the answer stream ended without an answer")


def _get_passage(library: Library, args: Mapping[str, Any]) -> dict[str, Any]:
    doc = _text(args, "doc") or ""
    unit, start, end = (_int(args, n) for n in ("unit", "start", "end"))
    if unit is None or start is None or end is None:
        raise InvalidInput("get_passage needs doc, unit, start and end")
    passage = library.passage(doc, unit, start, end)
    row = passage.to_json()
    base = library.settings.server.base_url
    if base:
        row["viewer_url"] = viewer_url(base, passage.kind, passage.doc_id, unit, start, end)
    return row


def _verify_claim(library: Library, args: Mapping[str, Any]) -> dict[str, Any]:
    from .cite.tags import format_tag

    verdict = library.verify_claim(
        _text(args, "doc") or "",
        _text(args, "quote") or "",
        _text(args, "claim") or "",
        page=_int(args, "page", low=1),
        unit=_int(args, "unit"),
    )
    row = verdict.to_json()
    if verdict.found and verdict.start is not None and verdict.end is not None:
        row["tag"] = format_tag(verdict.unit, verdict.start, verdict.end)
    return row


def _list_documents(library: Library, _: Mapping[str, Any]) -> dict[str, Any]:
    return {"documents": [document_json(d) for d in library.documents()]}


_HANDLERS: dict[str, Callable[[Library, Mapping[str, Any]], dict[str, Any]]] = {
    "search": _search,
    "ask": _ask,
    "get_passage": _get_passage,
    "verify_claim": _verify_claim,
    "list_documents": _list_documents,
}
_SCHEMAS = {tool.name: tool.input_schema for tool in TOOLS}


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def call_tool(library: Library, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """Run tool ``name`` on ``library`` (already the caller's view): its JSON result, or a tool
    error with a clear message (never a traceback). Sync: the store and embedder block."""
    handler = _HANDLERS.get(name)
    if handler is None:
        return _error(f"no tool {name!r}: the tools are {', '.join(_HANDLERS)}")
    try:
        _check_names(name, arguments, _SCHEMAS[name])
        result = handler(library, arguments)
    except TruthBaseError as exc:
        return _error(f"{type(exc).__name__}: {exc}")
    except Exception:
        logger.exception("unexpected error in MCP tool %s", name)
        return _error("internal error")
    text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=result
    )


# -- who asks ------------------------------------------------------------------------------------


def viewer_for(library: Library, host: str, headers: Mapping[str, str] | None) -> Viewer:
    """The viewer of one request: the operator over stdio (no headers); over HTTP the local user
    when the index needs no accounts on ``host``, else the user of the bearer token
    (McpAuthError without a valid one)."""
    if headers is None:
        return OPERATOR
    store = library.store
    if not accounts_required(store, host):
        return OPERATOR
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    viewer = token_viewer(store, credentials.strip()) if scheme.lower() == "bearer" else None
    if viewer is None:
        raise McpAuthError(
            "login required: send Authorization: Bearer TOKEN (truthbase tokens create --user NAME)"
        )
    return viewer


def _headers(ctx: ServerRequestContext[Any]) -> Mapping[str, str] | None:
    request = ctx.request
    return request.headers if isinstance(request, Request) else None


def admit_ask(library: Library, request: Request, arguments: Mapping[str, Any]) -> str | None:
    """The chat quota (``quota.*``) for an ``ask`` over HTTP, counted as ``POST /api/chat``
    counts it (per user, or per client address for the local user; agent mode against
    ``quota.agent_per_day``), before any model call: None when admitted, else why not. Over
    stdio the operator is not counted, as ``truthbase ask`` is not."""
    settings = library.settings
    limits = quota_limits(settings.quota).for_request(arguments.get("mode") == "agent")
    if limits.unlimited:
        return None
    address = client_key(request, settings.quota.client_header, settings.auth.trusted_proxies)
    key = client_key_for(library.viewer.user, address)
    admission = library.store.try_admit(key, time.time(), limits)
    if admission.admitted:
        return None
    return f"quota exceeded: try again in {retry_after_header(admission)} s"


def create_server(library: Library, *, host: str = "127.0.0.1") -> Server[Any]:
    """The MCP server over ``library``; ``host`` is what the HTTP transport binds (it decides,
    with the users of the index, whether requests need a token)."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(TOOLS))

    async def tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request if isinstance(ctx.request, Request) else None
        arguments = params.arguments or {}

        def run() -> types.CallToolResult:
            try:
                viewer = viewer_for(library, host, request.headers if request else None)
            except McpAuthError as exc:
                return _error(str(exc))
            view = library.for_viewer(viewer)
            if params.name == "ask" and request is not None:
                refused = admit_ask(view, request, arguments)
                if refused is not None:
                    return _error(refused)
            return call_tool(view, params.name, arguments)

        return await anyio.to_thread.run_sync(run)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        headers = _headers(ctx)

        def run() -> list[DocumentInfo]:
            return library.for_viewer(viewer_for(library, host, headers)).documents()

        documents = await anyio.to_thread.run_sync(run)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=RESOURCE_PREFIX + d.id,
                    name=d.title,
                    description=f"{d.kind.upper()} metadata: {d.title} ({d.unit_count} units)",
                    mime_type="application/json",
                )
                for d in documents
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        headers = _headers(ctx)
        uri = str(params.uri)

        def run() -> DocumentInfo:
            if not uri.startswith(RESOURCE_PREFIX):
                raise InvalidInput(f"no resource {uri}: documents are {RESOURCE_PREFIX}ID")
            view = library.for_viewer(viewer_for(library, host, headers))
            return view.document(uri.removeprefix(RESOURCE_PREFIX))

        try:
            info = await anyio.to_thread.run_sync(run)
        except TruthBaseError as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri,
                    text=json.dumps(document_json(info), ensure_ascii=False),
                    mime_type="application/json",
                )
            ]
        )

    return Server(
        "truthbase",
        version=_version(),
        instructions=(
            "TruthBase holds the user's PDFs and EPUB books. Find evidence with search, read "
            "around it with get_passage, answer with ask (citations carry a verified state), "
            "and check any quote you cite with verify_claim before you rely on it."
        ),
        on_list_tools=list_tools,
        on_call_tool=tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("truthbase")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "0+unknown"


# -- transports ----------------------------------------------------------------------------------


async def run_stdio(library: Library) -> None:
    """Serve ``library`` over stdin/stdout until the client closes it."""
    from mcp.server.stdio import stdio_server

    server = create_server(library)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class TokenGate:
    """ASGI middleware of the HTTP transport: once the index has users (or on a non-loopback
    host), a request without a valid API token is answered 401 before the MCP layer runs."""

    def __init__(self, app: ASGIApp, library: Library, host: str) -> None:
        self.app = app
        self.library = library
        self.host = host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Request(scope).headers
            try:
                await anyio.to_thread.run_sync(viewer_for, self.library, self.host, headers)
            except McpAuthError as exc:
                response = JSONResponse(
                    {"detail": str(exc)},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="truthbase"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(library: Library, *, host: str = "127.0.0.1", path: str = "/mcp") -> ASGIApp:
    """The streamable HTTP app (the MCP endpoint at ``path``) behind :class:`TokenGate`."""
    server = create_server(library, host=host)
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    return TokenGate(app, library, host)
