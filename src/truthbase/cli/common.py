"""What every command shares: the consoles, the app context, failing with a message."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from rich.console import Console

from ..config import Settings
from ..embed import Embedder, load_embedder
from ..store import Store, open_store

console = Console()
err_console = Console(stderr=True)


class AppContext:
    """What every command needs, created lazily so `--help` stays fast."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._embedder: Embedder | None = None

    @contextmanager
    def store(self) -> Iterator[Store]:
        store = open_store(self.settings)
        try:
            yield store
        finally:
            store.close()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.settings.embedder)
        return self._embedder


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` as an error and exit with ``code`` (2: usage or setup problem)."""
    err_console.print(f"[bold red]error:[/] {message}")
    sys.exit(code)


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
