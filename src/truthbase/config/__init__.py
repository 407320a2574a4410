"""The one typed settings tree.

Read at the edges only (the CLI and the server) from ``TRUTHBASE_*`` environment variables and an
optional ``truthbase.toml``, then passed down as plain values. Nested fields use ``__`` in the
environment: ``TRUTHBASE_CHUNKING__MAX_CHARS=600``. The sections live in :mod:`.pipeline` (what
answers a question, with :mod:`.refusal` and :mod:`.support`), :mod:`.books` (the segment index
and the agent) and :mod:`.service` (what serves it); this module composes them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .books import (
    SUMMARIZER_CHOICES,
    AgentSettings,
    SegmentSettings,
    SummarizerChoice,
    SummarizerKind,
)
from .pipeline import (
    DEFAULT_K,
    JUDGE_CHOICES,
    ChunkingSettings,
    EmbedderSettings,
    ExtractiveSettings,
    JudgeChoice,
    LLMEndpoint,
    LLMSettings,
    OcrSettings,
    RetrievalSettings,
    SupportSettings,
)
from .refusal import RefusalModelSettings
from .service import (
    AuthSettings,
    PostgresSettings,
    QuotaSettings,
    ServerSettings,
    SqliteSettings,
    TelemetrySettings,
    UploadSettings,
)

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_K",
    "JUDGE_CHOICES",
    "SUMMARIZER_CHOICES",
    "AgentSettings",
    "AuthSettings",
    "ChunkingSettings",
    "EmbedderSettings",
    "ExtractiveSettings",
    "JudgeChoice",
    "LLMEndpoint",
    "LLMSettings",
    "OcrSettings",
    "PostgresSettings",
    "QuotaSettings",
    "RefusalModelSettings",
    "RetrievalSettings",
    "SegmentSettings",
    "ServerSettings",
    "Settings",
    "SqliteSettings",
    "SummarizerChoice",
    "SummarizerKind",
    "SupportSettings",
    "TelemetrySettings",
    "UploadSettings",
    "data_folder",
]

DEFAULT_DB = Path("truthbase.sqlite")


def data_folder(settings: Settings) -> Path:
    """The index's data folder (see :attr:`UploadSettings.data_dir`)."""
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
    support: SupportSettings = Field(default_factory=SupportSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    sqlite: SqliteSettings = Field(default_factory=SqliteSettings)
    quota: QuotaSettings = Field(default_factory=QuotaSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    segments: SegmentSettings = Field(default_factory=SegmentSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    library: UploadSettings = Field(default_factory=UploadSettings)
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
