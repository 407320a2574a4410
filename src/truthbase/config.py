"""The one typed settings tree.

Read at the edges only (the CLI and the server) from ``TRUTHBASE_*`` environment variables and an
optional ``truthbase.toml``, then passed down as plain values. Nested fields use ``__`` in the
environment: ``TRUTHBASE_CHUNKING__MAX_CHARS=600``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
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


class EmbedderSettings(_Section):
    name: str = Field(
        default="minilm",
        description=(
            "'minilm' (bundled all-MiniLM-L6-v2, ONNX int8, offline), "
            "'onnx:DIR' (a folder with model.onnx and tokenizer.json), "
            "or 'openai:MODEL' (any OpenAI-compatible /v1/embeddings endpoint)."
        ),
    )
    base_url: str | None = Field(default=None, description="Base URL of the embeddings endpoint.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Variable that holds the API key."
    )
    batch_size: int = Field(default=32, ge=1, le=2048, description="Texts per embedding call.")
    timeout_s: float = Field(
        default=60.0, gt=0, description="Timeout of one remote embedding call."
    )


class RetrievalSettings(_Section):
    k: int = Field(default=8, ge=1, le=100, description="Results returned by a search.")
    rrf_k: float = Field(default=60.0, gt=0, description="The k of reciprocal rank fusion.")
    fts_weight: float = Field(
        default=1.0, ge=0, description="Weight of the full-text arm in fusion."
    )
    dense_weight: float = Field(default=1.0, ge=0, description="Weight of the dense arm in fusion.")
    candidates: int = Field(default=50, ge=1, le=1000, description="Results each arm contributes.")


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
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)

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
