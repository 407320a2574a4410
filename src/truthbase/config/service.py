"""Settings of the service: server, PostgreSQL, quotas, accounts, telemetry, the library."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from .base import Section as _Section
from .pipeline import DEFAULT_K

__all__ = [
    "AuthSettings",
    "PostgresSettings",
    "QuotaSettings",
    "ServerSettings",
    "SqliteSettings",
    "TelemetrySettings",
    "UploadSettings",
]


class ServerSettings(_Section):
    """The web app (`truthbase serve`)."""

    host: str = Field(default="127.0.0.1", description="Interface the server listens on.")
    port: int = Field(default=8000, ge=0, le=65_535, description="TCP port (0: any free port).")
    web_dir: Path | None = Field(
        default=None,
        description=(
            "Folder with the chat page and viewer (index.html, js/, css/) and node_modules/"
            "pdfjs-dist; None: the package's own web/ folder (truthbase/web)."
        ),
    )
    sources: int = Field(
        default=DEFAULT_K, ge=1, le=50, description="Sources retrieved per chat answer."
    )
    base_url: str | None = Field(
        default=None,
        description=(
            "The web app's public URL (e.g. http://127.0.0.1:8000): MCP search results link to "
            "the viewer under it. None: no links."
        ),
    )
    max_body_bytes: int = Field(
        default=1 << 20,
        ge=1024,
        description="Largest request body (bytes) of every route but uploads (which have "
        "library.max_file_bytes) and report re-checks (32 MiB): a larger one is answered 413 "
        "before it is parsed.",
    )
    body_idle_timeout_s: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="Seconds a request body may stall (nothing arrives) before it is answered "
        "408 and the connection closed: a client that declares a body and stops sending holds "
        "no connection for longer. Counted between the body's chunks, so a slow upload that "
        "keeps moving is never cut.",
    )
    max_concurrent_chats: int = Field(
        default=8,
        ge=1,
        description="Chats (all modes) one server process runs at once; one more is answered "
        "503 with Retry-After at once.",
    )
    max_concurrent_agent: int = Field(
        default=2,
        ge=1,
        description="Agent-mode chats one server process runs at once (within "
        "max_concurrent_chats); one more is answered 503 with Retry-After.",
    )
    agent_mode: Literal["everyone", "admins"] = Field(
        default="admins",
        description="Who may ask in agent mode (up to agent.max_steps model calls and the "
        "segment selection's): admins only (a 403 for others), or everyone (still counted "
        "against quota.agent_per_day).",
    )
    allowed_hosts: list[str] | None = Field(
        default=None,
        description="Host names the server answers to (a Host header naming any other is 400: "
        "DNS rebinding); '*' any, '.example.org' that domain and its subdomains. None: "
        "localhost, 127.0.0.1, ::1 and server.host when bound to a loopback address, any "
        "otherwise (logins are required there).",
    )


class PostgresSettings(_Section):
    """The PostgreSQL backend (used when ``database_url`` is set)."""

    hnsw: bool = Field(
        default=False,
        description=(
            "Build and use HNSW indexes for the dense arm (approximate) whatever the index's "
            "size. False: exact cosine up to hnsw_min_rows vector rows, HNSW above."
        ),
    )
    hnsw_min_rows: int | None = Field(
        default=150_000,
        ge=1,
        description="Vector rows (chunks and sentence windows) from which the HNSW indexes are "
        "built (once, by the write that crosses it, or on opening) and used without hnsw set; "
        "None: only when hnsw is true. Exact below (docs/evals/scale-search.md).",
    )
    pool_size: int = Field(
        default=8, ge=1, le=256, description="Most database connections one process holds."
    )
    connect_timeout_s: float = Field(
        default=10.0, gt=0, le=600, description="Longest wait to connect to the database."
    )
    statement_timeout_s: float = Field(
        default=300.0,
        gt=0,
        le=3600,
        description="Longest one statement may run (PostgreSQL's statement_timeout): a stuck "
        "query is an error (503), never a hang.",
    )
    # m / ef_construction / ef_search: benchmarks/pg_bench.py measures HNSW recall@10 against
    # exact with these (pgvector's own defaults are 16 / 64 / 40). At 1M chunks a graph of
    # 16 / 64 held recall at .95 whatever the beam; 24 / 128 reaches 1.0 (docs/evals/
    # scale-search.md).
    hnsw_m: int = Field(
        default=24,
        ge=2,
        le=100,
        description="HNSW graph degree (when the index is built). At 1M chunks recall@10 "
        "against exact was .95 with 16 and 1.0 with 24 (ef_construction 64 and 128).",
    )
    hnsw_ef_construction: int = Field(
        default=128, ge=4, le=1000, description="HNSW build-time candidate list size."
    )
    hnsw_ef_search: int = Field(
        default=800,
        ge=1,
        le=1000,
        description="HNSW query-time candidate list size (at least 4x the rows asked). At 1M "
        "chunks on the default graph recall@10 against exact was 1.0 at 400, 800 and 1000, "
        "hybrid p50 29 to 33 ms (docs/evals/scale-search.md).",
    )


class SqliteSettings(_Section):
    """The SQLite backend (the file at ``db``)."""

    ann_min_rows: int | None = Field(
        default=500_000,
        ge=1,
        description="Vector rows (chunks and sentence windows, about 5.5 a chunk) from which the "
        "dense arm uses an approximate graph over the distinct stored vectors (usearch HNSW, "
        "kept beside the file as <db>.ann, built in the background when documents change while "
        "the exact arm answers) with exact rescoring; None: always exact. Recall@50 against "
        "exact: 1.000 at 800k rows of 1,000 copies, .9996 on the real 22k-chunk library "
        "(docs/evals/scale-search.md).",
    )
    ann_connectivity: int = Field(
        default=16, ge=4, le=64, description="Graph degree of the dense arm's graph."
    )
    ann_expansion_add: int = Field(
        default=128, ge=8, le=1024, description="Build-time beam of the dense arm's graph."
    )
    ann_expansion_search: int = Field(
        default=2048,
        ge=8,
        le=4096,
        description="Query-time beam of the dense arm's graph (at least the rows asked; 512 "
        "missed equal-scoring copies: docs/evals/scale-search.md).",
    )
    ann_overfetch: int = Field(
        default=8,
        ge=1,
        le=64,
        description="Nearest distinct vectors asked of the graph per chunk wanted (a chunk has "
        "several rows: its vector and its windows'); grown 4x when a scope filter leaves too "
        "few.",
    )
    fts_postings_min_rows: int | None = Field(
        default=10_000,
        ge=1,
        description="Chunks from which the full-text arm ranks from postings held in memory "
        "(built in the background once a process has asked a few full-text queries of the "
        "index's current contents: 8 s and 38 MB at 22k chunks, 17 s and 217 MB at 145k) "
        "instead of asking FTS5, whose cost grows with every chunk a question's words match; "
        "the ranking is the same, bit for bit (docs/evals/scale-search.md). None: always FTS5.",
    )


class QuotaSettings(_Section):
    """Admission limits of ``POST /api/chat``, checked before any model call (None: unlimited)."""

    per_client_per_minute: int | None = Field(
        default=None, ge=0, description="Chat requests one client may make per UTC minute."
    )
    per_client_per_day: int | None = Field(
        default=None, ge=0, description="Chat requests one client may make per UTC day."
    )
    global_per_day: int | None = Field(
        default=None, ge=0, description="Chat requests all clients together may make per UTC day."
    )
    client_header: str | None = Field(
        default=None,
        description=(
            "Request header that names the client behind a proxy (X-Forwarded-For style: the "
            "last address that is not a trusted proxy), read only from the peers listed in "
            "auth.trusted_proxies; None: X-Forwarded-For from those peers, the peer's IP address "
            "otherwise. Keys the quota of the anonymous local mode; signed-in users are counted "
            "by name."
        ),
    )
    agent_per_day: int | None = Field(
        default=None,
        ge=0,
        description="Agent-mode chat requests one user (or client) may make per UTC day.",
    )
    search_per_client_per_minute: int | None = Field(
        default=None,
        ge=0,
        description="GET /api/search requests one user (or client) may make per UTC minute "
        "(counted apart from chats).",
    )
    search_per_client_per_day: int | None = Field(
        default=None,
        ge=0,
        description="GET /api/search requests one user (or client) may make per UTC day.",
    )


class AuthSettings(_Section):
    """Accounts and sessions of the web app (`truthbase users`, `truthbase tokens`, /login)."""

    session_lifetime_s: int = Field(
        default=12 * 3600,
        ge=60,
        description="Seconds a login lasts (the session and its cookie expire together).",
    )
    cookie_secure: Literal["auto", "always", "never"] = Field(
        default="auto",
        description=(
            "The session cookie's Secure flag: auto (when the request came over HTTPS), always "
            "or never."
        ),
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description=(
            "Peer addresses or CIDR networks of reverse proxies whose X-Forwarded-For (or "
            "quota.client_header) names the client; from any other peer the header is ignored."
        ),
    )
    secret_key_file: Path | None = Field(
        default=None,
        description=(
            "File holding the key that signs session cookies (created with a random key on "
            "first use); None: secret.key in the index's data folder (``<db stem>-data/`` "
            "beside the SQLite file, ``./truthbase-data`` on PostgreSQL)."
        ),
    )


class TelemetrySettings(_Section):
    """Traces, metrics and logs (:mod:`truthbase.telemetry`)."""

    otlp_endpoint: str | None = Field(
        default=None,
        description=(
            "OTLP/HTTP endpoint that receives the traces (http://127.0.0.1:4318 for a local "
            "Jaeger or OpenTelemetry collector; Langfuse's /api/public/otel); None: no tracing "
            "at all (OpenTelemetry's no-op tracer). Needs the telemetry extra."
        ),
    )
    service_name: str = Field(
        default="truthbase", min_length=1, description="The traces' service.name."
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="The server's log lines: text, or one JSON object a line (with the "
        "request id, and the trace id when tracing).",
    )
    metrics: bool = Field(
        default=True,
        description="Serve Prometheus metrics at GET /metrics (admins, or loopback clients).",
    )


class UploadSettings(_Section):
    """Uploads and ingest jobs (the Library page, ``POST /api/documents``, ``truthbase worker``)."""

    data_dir: Path | None = Field(
        default=None,
        description=(
            "The index's data folder: uploaded files live under its uploads/ by content hash. "
            "None: beside the SQLite file (``<db stem>-data/``), or ``./truthbase-data`` on "
            "PostgreSQL (workers on other machines must see the same folder)."
        ),
    )
    max_file_bytes: int = Field(
        default=200 * 1024 * 1024, ge=1, description="Largest upload, in bytes (413 above)."
    )
    files_per_day: int | None = Field(
        default=None, ge=0, description="Uploads one user may make per UTC day (429 above)."
    )
    bytes_per_user: int | None = Field(
        default=None,
        ge=0,
        description="Bytes of uploaded documents one user may hold (413 above); None: no limit.",
    )
    max_attempts: int = Field(
        default=3, ge=1, le=20, description="Claims of one job before a lost worker fails it."
    )
    lease_s: float = Field(
        default=60.0,
        gt=0,
        description=(
            "Seconds a claimed job stays a worker's without a heartbeat; then another worker "
            "may claim it again (a killed worker's job is retried)."
        ),
    )
    poll_s: float = Field(default=1.0, gt=0, description="Seconds an idle worker waits.")
    server_workers: int = Field(
        default=1, ge=0, le=8, description="Ingest workers the server runs in-process (0: none)."
    )
