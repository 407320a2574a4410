"""The MCP server: who asks, the handlers of the protocol, and the two transports (stdio, and
streamable HTTP behind :class:`TokenGate`). The tools themselves are :mod:`.tools`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server import Server, ServerRequestContext
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..app import Service
from ..app.admission import client_address
from ..app.viewers import accounts_required, bearer_viewer
from ..errors import InvalidInput, TruthBaseError
from ..model import DocumentInfo, listed_titles
from ..people import OPERATOR, Viewer
from ..text.valid import has_lone_surrogate
from .tools import RESOURCE_PREFIX, TOOLS, call_tool, document_json, tool_error

__all__ = [
    "McpAuthError",
    "TokenGate",
    "address_of",
    "create_server",
    "http_app",
    "run_stdio",
    "viewer_for",
]

INSTRUCTIONS = (
    "TruthBase holds the user's PDFs and EPUB books. Find evidence with search, read "
    "around it with get_passage, answer with ask (citations carry a verified state), "
    "and check any quote you cite with verify_claim before you rely on it. Saved threads "
    "(list_threads, open_thread) keep answers with their citations checked again when opened."
)


class McpAuthError(TruthBaseError):
    """An HTTP request without a valid API token to an index that has users."""


# -- who asks ------------------------------------------------------------------------------------


def viewer_for(service: Service, host: str, headers: Mapping[str, str] | None) -> Viewer:
    """The viewer of one request: the operator over stdio (no headers); over HTTP the local user
    when the index needs no accounts on ``host``, else the user of the bearer token
    (McpAuthError without a valid one)."""
    if headers is None or not accounts_required(service.store, host):
        return OPERATOR
    viewer = bearer_viewer(service.store, headers.get("authorization", ""))
    if viewer is None:
        raise McpAuthError(
            "login required: send Authorization: Bearer TOKEN (truthbase tokens create --user NAME)"
        )
    return viewer


def _headers(ctx: ServerRequestContext[Any]) -> Mapping[str, str] | None:
    request = ctx.request
    return request.headers if isinstance(request, Request) else None


def address_of(service: Service, request: Request) -> str:
    """The caller's address, through the trusted proxies only (as the web app finds it)."""
    peer = request.client.host if request.client is not None else "unknown"
    quota, auth = service.settings.quota, service.settings.auth
    return client_address(peer, request.headers, quota.client_header, auth.trusted_proxies)


@dataclass(frozen=True, slots=True)
class _Handlers:
    """The protocol's handlers over ``service``; ``host`` is what the HTTP transport binds."""

    service: Service
    host: str

    def _view(self, headers: Mapping[str, str] | None) -> Service:
        return self.service.for_viewer(viewer_for(self.service, self.host, headers))

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(TOOLS))

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request if isinstance(ctx.request, Request) else None
        arguments = params.arguments or {}

        def run() -> types.CallToolResult:
            try:
                view = self._view(request.headers if request else None)
            except McpAuthError as exc:
                return tool_error(str(exc))
            address = address_of(self.service, request) if request is not None else None
            return call_tool(view, params.name, arguments, address=address)

        return await anyio.to_thread.run_sync(run)

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        headers = _headers(ctx)
        documents = await anyio.to_thread.run_sync(lambda: self._view(headers).documents())
        labels = listed_titles(documents)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=RESOURCE_PREFIX + d.id,
                    name=labels[d.id],
                    description=f"{d.kind.upper()} metadata: {labels[d.id]} ({d.unit_count} units)",
                    mime_type="application/json",
                )
                for d in documents
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        headers = _headers(ctx)
        uri = str(params.uri)

        def run() -> DocumentInfo:
            if not uri.startswith(RESOURCE_PREFIX):
                raise InvalidInput(f"no resource {uri}: documents are {RESOURCE_PREFIX}ID")
            return self._view(headers).document(uri.removeprefix(RESOURCE_PREFIX))

        try:
            info = await anyio.to_thread.run_sync(run)
        except TruthBaseError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        text = json.dumps(document_json(info), ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="application/json")]
        )


def create_server(service: Service, *, host: str = "127.0.0.1") -> Server[Any]:
    """The MCP server over ``service``; ``host`` is what the HTTP transport binds (it decides,
    with the users of the index, whether requests need a token)."""
    handlers = _Handlers(service, host)
    return Server(
        "truthbase",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_read_resource=handlers.read_resource,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("truthbase")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "0+unknown"


# -- transports ----------------------------------------------------------------------------------


async def run_stdio(service: Service) -> None:
    """Serve ``service`` over stdin/stdout until the client closes it."""
    import io
    import sys

    from mcp.server.stdio import stdio_server

    server = create_server(service)
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    lines = CheckedLines(stdin)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.replies = write_stream
        await server.run(read_stream, write_stream, server.create_initialization_options())


class CheckedLines:
    """The lines of stdin as the SDK's stdio reader takes them, each one a JSON-RPC message it
    can read. The SDK drops a line it cannot (not JSON, a lone surrogate in a string, a wrong
    shape) without a reply, so the client waited for ever; here such a line is answered with a
    JSON-RPC error (its request's id when the line has one) and not passed on."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines
        #: Where the error replies go: the SDK's write stream, set once the transport is up.
        self.replies: MemoryObjectSendStream[SessionMessage] | None = None

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue
            if unreadable(line):
                reply = refusal(line)
                if reply is not None and self.replies is not None:
                    await self.replies.send(SessionMessage(reply))
                continue
            yield line


def unreadable(message: str | bytes) -> bool:
    """Whether the SDK cannot read ``message`` as one JSON-RPC message of this protocol, or would
    read it as a notification though it has an id (one of no type a request may have: a
    fraction, null, true, an object), which it drops without a reply."""
    try:
        read = types.jsonrpc_message_adapter.validate_json(message, by_name=False)
    except ValueError:  # pydantic's ValidationError
        return True
    if not isinstance(read, types.JSONRPCNotification) or b'"id"' not in _bytes(message):
        return False
    raw = json.loads(message)
    return isinstance(raw, dict) and "id" in raw


def _bytes(message: str | bytes) -> bytes:
    return message.encode("utf-8", "surrogatepass") if isinstance(message, str) else message


def refusal(line: str | bytes) -> types.JSONRPCError | None:
    """The error reply to a message that is no JSON-RPC message this server reads
    (:func:`unreadable`); None for a notification (no id: nothing may answer it)."""
    try:
        raw = json.loads(line)
    except ValueError:
        return _error(None, types.PARSE_ERROR, "the message is not JSON")
    except RecursionError:
        return _error(None, types.PARSE_ERROR, "the message nests too deeply to be read")
    if isinstance(raw, dict) and "method" in raw and "id" not in raw:
        return None
    request_id = raw.get("id") if isinstance(raw, dict) else None
    usable = _usable_id(request_id)
    if has_lone_surrogate(json.dumps(raw, ensure_ascii=False)):
        why = "a string of the request is not valid text (a lone surrogate)"
    elif isinstance(raw, dict) and "id" in raw and not usable:
        why = "the id of a request is an integer or a string"
    else:
        why = "the message is not a JSON-RPC request of this protocol"
    return _error(request_id if usable else None, types.INVALID_REQUEST, why)


def _usable_id(value: Any) -> bool:
    """An id a reply can carry: an integer or a string of text."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and not has_lone_surrogate(value))


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


class TokenGate:
    """ASGI middleware of the HTTP transport: once the index has users (or on a non-loopback
    host), a request without a valid API token is answered 401 before the MCP layer runs."""

    def __init__(self, app: ASGIApp, service: Service, host: str) -> None:
        self.app = app
        self.service = service
        self.host = host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Request(scope).headers
            try:
                await anyio.to_thread.run_sync(viewer_for, self.service, self.host, headers)
            except McpAuthError as exc:
                response = JSONResponse(
                    {"detail": str(exc)},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="truthbase"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class CheckedBodies:
    """ASGI middleware of the HTTP transport, as :class:`CheckedLines` is stdio's: a POST whose
    body the SDK cannot read (or would take for a notification: a request whose id is a
    fraction, null, true or an object, answered 202 and dropped) is answered 400 with a JSON-RPC
    error that says why; any other body goes on as it came. Behind the SDK's body limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        reply = refusal(body) if body.strip() and unreadable(body) else None
        if reply is not None:
            content = reply.model_dump(mode="json", by_alias=True, exclude_unset=True)
            await JSONResponse(content, status_code=400)(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def http_app(service: Service, *, host: str = "127.0.0.1", path: str = "/mcp") -> ASGIApp:
    """The streamable HTTP app (the MCP endpoint at ``path``) behind :class:`CheckedBodies`
    (under the SDK's limit on a body) and :class:`TokenGate`."""
    server = create_server(service, host=host)
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    checked = RequestBodyLimitMiddleware(CheckedBodies(app), DEFAULT_MAX_REQUEST_BODY_SIZE)
    return TokenGate(checked, service, host)
