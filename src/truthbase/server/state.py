"""What one app holds while it runs: the open index, the embedder, the session cookies' key,
the chat slots, the server's own ingest workers, the web folder and the caches of file checks
and book layouts. The routes reach it through their dependencies (:mod:`.deps`)."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

from ..config import Settings
from ..embed import Embedder, load_embedder
from ..store import Store, open_store
from .books import BookCache
from .chat_limits import Slots
from .files import FileState, file_key, hash_matches

__all__ = ["AppState", "load_secret_key", "secret_key_path"]


def secret_key_path(settings: Settings) -> Path:
    """``auth.secret_key_file``, else secret.key in the index's data folder (the same folder
    uploads use: ``<db stem>-data/`` beside the SQLite file, ``./truthbase-data`` on
    PostgreSQL)."""
    if settings.auth.secret_key_file is not None:
        return settings.auth.secret_key_file
    folder = (
        Path("truthbase-data")
        if settings.database_url
        else settings.db.parent / f"{settings.db.stem}-data"
    )
    return folder / "secret.key"


def load_secret_key(path: Path) -> bytes:
    """The signing key in ``path``, created (32 random bytes, hex, mode 0600) when missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
    key = path.read_text("utf-8").strip()
    if len(key) < 32:
        raise ValueError(f"the secret key in {path} is too short (at least 32 characters)")
    return key.encode("utf-8")


class AppState:
    """The open index, the (lazily loaded) embedder, the session key and the ingest workers of
    one app: what its routes depend on (:mod:`.deps`)."""

    def __init__(self, settings: Settings, web_dir: Path) -> None:
        self.settings = settings
        self.web_dir = web_dir
        self.slots = Slots(
            settings.server.max_concurrent_chats, settings.server.max_concurrent_agent
        )
        self.books = BookCache(self, self.file_matches_index)
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()
        self._file_checks: dict[tuple[str, int, int, int, int], bool] = {}
        self._key: bytes | None = None
        self._workers: list[threading.Thread] = []
        self._stop_workers = threading.Event()
        self._wake_workers = threading.Event()

    def key(self) -> bytes:
        """The session cookies' signing key (read, or created, on first use)."""
        with self._lock:
            if self._key is None:
                self._key = load_secret_key(secret_key_path(self.settings))
            return self._key

    def open(self) -> None:
        self._store = open_store(self.settings)

    def start_workers(self) -> None:
        """The server's own ingest workers (``library.server_workers`` threads)."""
        from ..ingest.worker import WorkerOptions, work, worker_name

        options = WorkerOptions.from_settings(self.settings)

        def loop(n: int) -> None:
            work(
                self.store,
                self.embedder,
                options,
                worker=f"{worker_name('server')}-{n}",
                stop=self._stop_workers,
                wake=self._wake_workers,
            )

        for n in range(self.settings.library.server_workers):
            thread = threading.Thread(target=loop, args=(n,), daemon=True, name=f"ingest-{n}")
            thread.start()
            self._workers.append(thread)

    def wake_workers(self) -> None:
        self._wake_workers.set()

    def stop_workers(self) -> None:
        self._stop_workers.set()
        self._wake_workers.set()
        for thread in self._workers:
            thread.join(timeout=30)
        self._workers = []

    def close(self) -> None:
        self.stop_workers()
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the app's store is not open (is the lifespan running?)")
        return self._store

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = load_embedder(self.settings.embedder)
            return self._embedder

    def file_state(self, doc_id: str, path: Path) -> FileState:
        """ "ok" when ``path`` is a regular file, reached through no link, whose bytes still hash
        to the document id (cached per file identity); "gone" when nothing is there; "changed"
        otherwise (other bytes, a link, not a regular file)."""
        key = file_key(path)
        if key is None:
            return "changed" if os.path.lexists(path) else "gone"
        with self._lock:
            cached = self._file_checks.get(key)
        if cached is None:
            cached = hash_matches(path, doc_id)
            with self._lock:
                self._file_checks[key] = cached
        return "ok" if cached else "changed"

    def file_matches_index(self, doc_id: str, path: Path) -> bool:
        """Whether the file is still the one ingested (see :meth:`file_state`)."""
        return self.file_state(doc_id, path) == "ok"
