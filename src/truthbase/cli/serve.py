"""`serve`: the web app."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from .common import AppContext, bind_socket


@click.command()
@click.option("--host", default=None, help="Interface to listen on [default 127.0.0.1].")
@click.option("--port", type=click.IntRange(0, 65535), default=None, help="Port [default 8000].")
@click.pass_obj
def serve(app: AppContext, host: str | None, port: int | None) -> None:
    """Serve the chat page, the PDF viewer and the HTTP API (OpenAPI at /docs)."""
    import uvicorn

    from ..server import create_app
    from ..telemetry import configure_logging

    server_settings = app.settings.server
    host = host if host is not None else server_settings.host
    port = port if port is not None else server_settings.port
    app.require_index()
    from ..app.viewers import is_loopback

    with app.store() as store:  # fail here, with a message (a StoreError), not in the startup
        users = store.user_count()
    if users == 0 and not is_loopback(host):
        raise InvalidInput(
            f"refusing to serve on {host} with no user: anyone who can reach it would read "
            "every document. Add an account first (truthbase users add NAME --admin), or "
            "serve on 127.0.0.1 for the single local user"
        )
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::", "::1") else host
    # click.echo, not rich: the URL line must never be wrapped (scripts and tests read it).
    click.echo(f"TruthBase serving {app.settings.db} at http://{shown}:{bound_port}/")
    click.echo(f"API docs at http://{shown}:{bound_port}/docs  (Ctrl-C stops)")
    if users == 0:
        click.echo("No accounts: single local user, every document (truthbase users add NAME).")
    else:
        click.echo(f"{users} accounts: every page and /api route needs a login or an API token.")
    proxies = app.settings.auth.trusted_proxies
    # The app knows the host it is bound to (--host wins): its Host check and login rule.
    bound = server_settings.model_copy(update={"host": host})
    settings = app.settings.model_copy(update={"server": bound})
    configure_logging(app.settings.telemetry)
    if app.settings.telemetry.otlp_endpoint:  # the CLI group configured the exporter
        click.echo(f"Traces go to {app.settings.telemetry.otlp_endpoint} (OTLP/HTTP).")
    # uvicorn's own proxy handling (X-Forwarded-For / -Proto) trusts 127.0.0.1 by default: only
    # the configured proxies may name the client or the scheme (the Secure cookie flag's).
    config = uvicorn.Config(
        create_app(settings),
        log_level="warning",
        proxy_headers=bool(proxies),
        forwarded_allow_ips=",".join(proxies) if proxies else "",
    )
    uvicorn.Server(config).run(sockets=[sock])
