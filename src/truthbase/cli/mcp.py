"""`mcp`: the index as a Model Context Protocol server (:mod:`truthbase.mcp`)."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from .common import AppContext, bind_socket


@click.command(name="mcp")
@click.option("--http", "use_http", is_flag=True, help="Streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="--http: interface.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="--http: port."
)
@click.pass_obj
def mcp_command(app: AppContext, use_http: bool, host: str, port: int) -> None:
    """Serve the index to MCP clients (Claude Desktop, Cursor, agent frameworks): the tools
    search, ask, get_passage, verify_claim and list_documents, and each document's metadata
    as a resource.

    stdio (the default) acts as the operator, who sees every document, as this command line
    does. --http serves streamable HTTP on HOST:PORT/mcp; once the index has users every
    request needs `Authorization: Bearer TOKEN` (truthbase tokens create) and sees what the
    token's user sees.
    """
    import anyio

    from ..api import Library
    from ..app.viewers import is_loopback
    from ..mcp import http_app, run_stdio

    app.require_index()
    with Library(settings=app.settings) as library:
        if not use_http:
            click.echo(f"TruthBase MCP server on stdio over {app.settings.db}", err=True)
            anyio.run(run_stdio, library)
            return
        import uvicorn

        users = library.store.user_count()
        if users == 0 and not is_loopback(host):
            raise InvalidInput(
                f"refusing to serve MCP on {host} with no user: anyone who can reach it would "
                "read every document. Add an account first (truthbase users add NAME), or use "
                "127.0.0.1"
            )
        sock = bind_socket(host, port)
        bound = sock.getsockname()[1]
        click.echo(f"TruthBase MCP server at http://{host}:{bound}/mcp  (Ctrl-C stops)")
        if users:
            click.echo(
                f"{users} accounts: send Authorization: Bearer TOKEN (truthbase tokens create)"
            )
        else:
            click.echo("No accounts: single local user, every document.")
        config = uvicorn.Config(http_app(library, host=host), log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
