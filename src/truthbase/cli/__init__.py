"""The `truthbase` command line: a thin shell over the library.

Settings are read here (environment, truthbase.toml, flags) and passed down. One module per
command family: :mod:`.ingest` (ingest), :mod:`.docs` (docs, search), :mod:`.eval` (eval
retrieval, tune, answers), :mod:`.answer` (ask, verify), :mod:`.claims` (verify-claim),
:mod:`.serve` (serve), :mod:`.mcp` (mcp), :mod:`.accounts` (users, tokens); :mod:`.common`
holds what they share. A :class:`~truthbase.errors.TruthBaseError` from any command is shown
by the root group (:class:`.common.TruthBaseGroup`) as one line on stderr with exit status 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..blas import limit_blas_threads
from ..config import Settings
from ..errors import InvalidInput
from .accounts import tokens_group, users_group
from .answer import ask_command, verify_command
from .claims import verify_claim_command
from .collections import collections_group
from .common import AppContext, TruthBaseGroup
from .docs import docs, search_command
from .eval import eval_group
from .exports import export_command
from .feedback import feedback_group
from .ingest import ingest
from .jobs import jobs_group, worker_command
from .mcp import mcp_command
from .segments import segments_group
from .serve import serve
from .threads import threads_group

__all__ = ["cli", "main"]


@click.group(
    cls=TruthBaseGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The SQLite index file [env TRUTHBASE_DB; default ./truthbase.sqlite]; "
    "TRUTHBASE_DATABASE_URL=postgresql://... uses PostgreSQL instead.",
)
@click.version_option(package_name="truthbase")
@click.pass_context
def cli(ctx: click.Context, db: Path | None) -> None:
    """TruthBase: answers from your PDFs and EPUB books, each citation one click from its passage.

    \b
    Typical use:
      truthbase --db my.sqlite ingest ~/papers
      truthbase --db my.sqlite search "what does GV.OC-01 require?"
    """
    limit_blas_threads()  # the command line is an edge: see truthbase.blas
    try:
        settings = Settings() if db is None else Settings(db=db)
    except ValueError as exc:  # pydantic's ValidationError (it names the bad variable), a bad TOML
        raise InvalidInput(f"invalid settings: {exc}") from exc
    if settings.telemetry.otlp_endpoint:  # every command's spans (ingest, ask, worker) go out
        from ..telemetry import configure_tracing

        configure_tracing(settings.telemetry)
    ctx.obj = AppContext(settings)


for _command in (
    ingest,
    docs,
    search_command,
    eval_group,
    serve,
    ask_command,
    verify_command,
    verify_claim_command,
    export_command,
    mcp_command,
):
    cli.add_command(_command)
cli.add_command(segments_group)
cli.add_command(users_group)
cli.add_command(tokens_group)
cli.add_command(collections_group)
cli.add_command(jobs_group)
cli.add_command(feedback_group)
cli.add_command(threads_group)
cli.add_command(worker_command)


def main() -> None:
    cli(prog_name="truthbase")


if __name__ == "__main__":
    main()
