"""What every command shares: the consoles, the app context, the one place errors surface."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..app import Service
from ..config import Settings
from ..embed import Embedder, load_embedder
from ..errors import InvalidInput, NotFound, TruthBaseError
from ..store import Store, open_store

#: A control character a terminal would act on (C0 but tab and newline, DEL, C1) or a
#: bidirectional override or isolate (text that reads as another), in stored text anyone may have
#: written: a comment, a question, a title, a file name, a document's text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _pictured(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def pictured(text: str) -> str:
    """``text`` with each control character a terminal would act on shown as its picture."""
    return _CONTROL.sub(_pictured, text)


class _Console(Console):
    """A console that shows every string it prints as text: a control character as its picture
    (ESC as ␛: an escape sequence in a feedback comment or a thread title reached the operator's
    terminal), and square brackets as brackets. A string is never read as rich markup: text from
    a page, a title or a query is full of brackets ("\\documentclass[a4paper]{article}",
    "\\usepackage[breaklines=true]{listings}"), and markup dropped them without a word (or
    raised MarkupError for "[/bold]": a traceback). The code's own styles go through
    :func:`styled`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, **options)

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(pictured(text), **options)


def styled(*parts: str | tuple[str, str]) -> Text:
    """One line of the code's own styles around text from anywhere: each part a string, or a
    (string, style) pair ("dim", "bold", "yellow"); every string shown as it is (brackets are
    text, control characters their pictures), as :class:`_Console` shows a plain string."""
    return Text.assemble(
        *((pictured(p[0]), p[1]) if isinstance(p, tuple) else pictured(p) for p in parts)
    )


console = _Console()
err_console = _Console(stderr=True)


class AppContext:
    """What every command needs, created lazily so `--help` stays fast."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._embedder: Embedder | None = None

    def require_index(self) -> None:
        """NotFound when --db names no SQLite index (PostgreSQL's is made on first use): a
        command that only reads says so rather than make an empty index (and its folders)."""
        if self.settings.database_url is None and not self.settings.db.exists():
            raise NotFound(
                f"no index at {self.settings.db}: run `truthbase --db PATH ingest ...` first"
            )

    @contextmanager
    def store(self, *, create: bool = False) -> Iterator[Store]:
        """The index of --db, opened; ``create``: made when there is none (ingest, the
        evaluations, adding a user), else NotFound (:meth:`require_index`)."""
        if not create:
            self.require_index()
        store = open_store(self.settings)
        try:
            yield store
        finally:
            store.close()

    @contextmanager
    def service(self, *, create: bool = False) -> Iterator[Service]:
        """The application service over a freshly opened index, as the operator (the CLI's
        user sees everything and manages accounts); ``create`` as :meth:`store`'s."""
        with self.store(create=create) as store:
            yield Service(store, self.settings, lambda: self.embedder)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.settings.embedder)
        return self._embedder


#: Exit status of a command that failed with a :class:`~truthbase.errors.TruthBaseError` (a
#: usage, input or setup problem), as click's own usage errors. A bug exits 1 with a traceback.
ERROR_EXIT = 2


class TruthBaseGroup(click.Group):
    """The root group. Every command runs inside its :meth:`invoke`, the one place where a
    :class:`~truthbase.errors.TruthBaseError` becomes ``error: MESSAGE`` on stderr and exit
    status 2. Any other exception is a bug and propagates: Python prints its traceback and
    exits 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TruthBaseError as exc:
            show_error(str(exc) or type(exc).__name__)
            ctx.exit(ERROR_EXIT)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket for ``serve`` and ``mcp --http`` (port 0: any free one), bound here
    so that a port in use is a clear error before the server starts. It listens at once: the
    URL line is printed before the server's startup (loading the app takes seconds), and a
    client that connects on reading it waits in the backlog instead of being refused."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc}") from exc
    sock.listen(2048)  # uvicorn's own backlog; its startup listens again, which is harmless
    return sock


def write_text_file(path: Path, text: str) -> None:
    """``text`` (UTF-8) into ``path``, its folder made when missing; a file that cannot be
    written (no such folder can be made, no permission, a full disk) is InvalidInput naming
    it, so the command exits 2 with the reason instead of a traceback."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from exc


def show_error(message: str) -> None:
    """``error: MESSAGE`` on stderr, not wrapped, the message printed as is (no markup)."""
    err_console.print(styled(("error:", "bold red"), " ", message), soft_wrap=True)


def snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def run_metadata() -> dict[str, Any]:
    """When and on which commit an evaluation ran, for the files kept under docs/evals/."""
    import subprocess
    from datetime import UTC, datetime

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), "commit": commit}
