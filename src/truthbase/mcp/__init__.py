"""``truthbase mcp``: the index as a Model Context Protocol server, for agents: a door of the
application service (:class:`truthbase.app.Service`), as the web app and the CLI are.

Built on the official MCP Python SDK's low-level :class:`mcp.server.Server`, so that every tool's
JSON schema and description are written here, for a model, and every error is ours to phrase.
The tools are a thin shell over the application service (:class:`truthbase.app.Service`,
whose policy every door shares): ``search``,
``ask``, ``get_passage``, ``verify_claim`` (the one :func:`truthbase.cite.verify.verify_claim`
the CLI runs), ``list_documents`` and ``list_collections`` (:mod:`.tools`); over what a user
keeps, ``list_threads``, ``open_thread``, ``share_thread``, ``unshare_thread``,
``give_feedback`` and ``verify_report`` (:mod:`.kept`); each document's metadata is a resource
(``truthbase://documents/{id}``).

Who asks decides what they see (:mod:`truthbase.access`, through the service's viewer):

* over stdio the caller is whoever started the process: the operator, who sees every document,
  as at the command line;
* over streamable HTTP (``--http``, 127.0.0.1 by default) an index with users needs an API token
  (``truthbase tokens create``) as ``Authorization: Bearer TOKEN`` on every request: without a
  valid one the request is answered 401 before MCP sees it, and each tool call acts as the
  token's user, re-checked on each call (a revoked token stops at once). An index without users
  on a loopback address serves the single local user, as ``truthbase serve`` does
  (:func:`truthbase.app.viewers.accounts_required` decides for both).

Over HTTP the caller has an address, so ``ask`` is counted against the chat quota and ``search``
against the search quota before they run, as the web app counts them (:mod:`truthbase.app`);
over stdio nothing is counted, as at the command line.

Errors: a :class:`~truthbase.errors.TruthBaseError` (an unknown or hidden document, a span out of
range, a bad argument) is an MCP tool error whose text is its message; anything else is a bug,
logged with its traceback and answered as the tool error ``internal error``.
"""

from __future__ import annotations

from .server import McpAuthError, TokenGate, create_server, http_app, run_stdio, viewer_for
from .tools import RESOURCE_PREFIX, TOOLS, call_tool

__all__ = [
    "RESOURCE_PREFIX",
    "TOOLS",
    "McpAuthError",
    "TokenGate",
    "call_tool",
    "create_server",
    "http_app",
    "run_stdio",
    "viewer_for",
]
