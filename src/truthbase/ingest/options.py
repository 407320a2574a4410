"""What ingesting a document depends on besides the file: one frozen value, built from the
settings tree at the edges (the CLI, :class:`truthbase.api.Library`, the server, ``truthbase
worker``) and passed down unchanged, to a pool's worker processes too (it pickles)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..config import ChunkingSettings, EmbedderSettings, OcrSettings, Settings
from ..model import Visibility
from ..records import IndexEmbedder

__all__ = ["IngestOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestOptions:
    """The settings every way through ingest applies, and whose new documents they are.

    ``ocr``: how pages without a usable text layer are read (always applied: OCR off means
    such pages stay empty). ``chunking``: chunk, window and token-sign settings.
    ``embedder``: the model a pool's worker process loads (the caller passes its loaded
    embedder to :func:`truthbase.ingest.prepare`; it must be this one). New documents are
    ``owner``'s (None: the operator) with ``visibility``. ``token_code``: the token code of
    the index written to (:meth:`for_index`; None: an empty index, which takes the default of
    :func:`truthbase.embed.token_code.default_token_code`). The prompt-injection screen has no
    setting: it runs on every document (:mod:`truthbase.ingest.screen`)."""

    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    ocr: OcrSettings = field(default_factory=OcrSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    owner: str | None = None
    visibility: Visibility = "shared"
    token_code: str | None = None

    def for_index(self, index: IndexEmbedder | None) -> IngestOptions:
        """These options for writing to an index that records ``index`` (None: an empty one):
        its documents keep the token code its first document chose."""
        code = None if index is None else index.token_code
        return self if code == self.token_code else replace(self, token_code=code)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, owner: str | None = None, visibility: Visibility = "shared"
    ) -> IngestOptions:
        return cls(
            chunking=settings.chunking,
            ocr=settings.ocr,
            embedder=settings.embedder,
            owner=owner,
            visibility=visibility,
        )
