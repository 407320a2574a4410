"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM...)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import openai

from truthbase.embed._base import EmbeddingError, Vectors, l2_normalize


class OpenAIEmbedder:
    """Vectors from ``POST {base_url}/embeddings``, L2-normalized here (servers differ on that).

    ``dim`` is taken from the first response unless given; a response of another width is an
    :class:`EmbeddingError`, as is any HTTP or connection failure. Texts go in batches of
    ``batch_size`` per request. The model id is ``openai:<model>``, which is also the
    ``TRUTHBASE_EMBEDDER__NAME`` that selects this embedder.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str,
        timeout: float = 60.0,
        batch_size: int = 32,
        dim: int | None = None,
        max_retries: int = 2,
    ) -> None:
        if not model:
            raise ValueError("an OpenAI-compatible embedder needs a model name")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.base_url = base_url
        self.batch_size = batch_size
        self._dim = dim
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    @property
    def model_id(self) -> str:
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        """The vector width; asks the server once (one short text) if no response gave it yet."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r}, dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        parts = [
            self._request(list(texts[begin : begin + self.batch_size]))
            for begin in range(0, len(texts), self.batch_size)
        ]
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def _where(self) -> str:
        return f"embedding model {self.model!r} at {self.base_url or 'the OpenAI API'}"

    def _request(self, batch: list[str]) -> Vectors:
        try:
            response = self._client.embeddings.create(
                model=self.model, input=batch, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"{self._where()}: HTTP {exc.status_code}: {_brief(_detail(exc))}"
            ) from exc
        except openai.APITimeoutError as exc:
            raise EmbeddingError(f"{self._where()}: request timed out") from exc
        except openai.APIError as exc:  # connection failures, undecodable responses
            raise EmbeddingError(f"{self._where()}: {_brief(str(exc))}") from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise EmbeddingError(
                f"{self._where()}: sent {len(batch)} texts, got {len(data)} embeddings back"
            )
        try:
            vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self._where()}: malformed embeddings in response") from exc
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise EmbeddingError(f"{self._where()}: embeddings of uneven or zero width")
        if not np.isfinite(vectors).all():
            raise EmbeddingError(f"{self._where()}: embeddings contain NaN or infinity")
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self._where()}: expected {self._dim} dimensions, got {vectors.shape[1]}"
            )
        return l2_normalize(vectors)


def _detail(exc: openai.APIStatusError) -> str:
    """The server's own error message (OpenAI, Ollama and vLLM put it in error.message)."""
    body: object = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return re.sub(r"^Error code: \d+ - ", "", exc.message)


def _brief(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
