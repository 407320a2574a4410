"""The scale-out store: PostgreSQL with pgvector, behind the same Protocol as SQLite's store.

One module per concept, each a set of functions over the connection :class:`~.pool.Pool`:
:mod:`.pool` (connections), :mod:`.schema` (creating and migrating the schema, refreshing its
SQL functions, typing the vector columns, HNSW), :mod:`.documents`, :mod:`.search` (the two
arms, in SQL; :mod:`.terms` turns the retrieval layer's FTS5 expression into their terms),
:mod:`.tokens`, :mod:`.answers`, :mod:`.segments`, :mod:`.quota` and :mod:`.accounts`.
:class:`PostgresStore` puts them behind the :class:`~truthbase.store.base.Store` Protocol;
column values are :mod:`truthbase.store.codec`'s, as SQLite's are.

Connections: a small pool (``pool_size``); each call borrows one, each document is written in
one transaction (with an advisory lock, so concurrent writers serialize as SQLite's
``BEGIN IMMEDIATE`` does).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ...library import Job, JobDraft, UploadLimits
from ...model import Chunk, DocumentInfo, TocEntry, Unit, Visibility
from ...quota import Admission, QuotaLimits, QuotaUsage
from ...records import (
    ApiTokenRecord,
    ArmHit,
    FloatMatrix,
    IndexedDocument,
    IndexEmbedder,
    ScreenResult,
    SessionRecord,
    StoredAnswer,
    StoredSegments,
    UserRecord,
)
from . import accounts, answers, documents, jobs, library, quota, search, segments, tokens
from .pool import Pool
from .schema import SCHEMA_VERSION, Hnsw, migrate

__all__ = ["SCHEMA_VERSION", "Hnsw", "PostgresStore"]


class PostgresStore:
    """A TruthBase index in a PostgreSQL database (pgvector required)."""

    def __init__(
        self,
        url: str,
        *,
        hnsw: bool = False,
        pool_size: int = 8,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        hnsw_ef_search: int = 100,
        connect_timeout_s: float = 10.0,
        statement_timeout_s: float = 300.0,
    ) -> None:
        self.url = url
        self.hnsw = Hnsw(
            enabled=hnsw, m=hnsw_m, ef_construction=hnsw_ef_construction, ef_search=hnsw_ef_search
        )
        self._pool = Pool(
            url,
            pool_size,
            connect_timeout_s=connect_timeout_s,
            statement_timeout_s=statement_timeout_s,
        )
        try:
            migrate(self._pool, self.hnsw)
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    # -- documents ------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        return documents.has_document(self._pool, doc_id)

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        documents.add_document(self._pool, self.hnsw, indexed, replace=replace)

    def list_documents(self) -> list[DocumentInfo]:
        return documents.list_documents(self._pool)

    def document(self, doc_id: str) -> DocumentInfo | None:
        return documents.document(self._pool, doc_id)

    def unit(self, doc_id: str, index: int) -> Unit | None:
        return documents.unit(self._pool, doc_id, index)

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        return documents.chunks(self._pool, chunk_ids)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        return documents.chunk_texts(self._pool, chunk_ids)

    def index_embedder(self) -> IndexEmbedder | None:
        return documents.get_index_embedder(self._pool)

    def languages(self) -> list[str | None]:
        return documents.languages(self._pool)

    def counts(self) -> dict[str, int]:
        return documents.counts(self._pool)

    def set_document_access(self, doc_id: str, owner: str | None, visibility: Visibility) -> bool:
        return documents.set_document_access(self._pool, doc_id, owner, visibility)

    # -- search arms ----------------------------------------------------------------------

    def fts_search(
        self,
        match_expression: str,
        limit: int,
        title_weight: float = 0.0,
        doc_ids: Collection[str] | None = None,
    ) -> list[ArmHit]:
        return search.fts_search(self._pool, match_expression, limit, title_weight, doc_ids)

    def dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        return search.dense_search(self._pool, self.hnsw, query_vector, limit, doc_ids)

    # -- token signs ----------------------------------------------------------------------

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        return tokens.token_signs(self._pool, chunk_ids)

    def chunks_without_token_signs(self) -> list[int]:
        return tokens.chunks_without_token_signs(self._pool)

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        return tokens.add_token_signs(self._pool, signs)

    # -- answer log -----------------------------------------------------------------------

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        return answers.add_answer(self._pool, question, answer)

    def answers(self) -> list[StoredAnswer]:
        return answers.answers(self._pool)

    # -- segment index --------------------------------------------------------------------

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        return segments.document_toc(self._pool, doc_id)

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        return segments.segments(self._pool, doc_id, summarizer)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        segments.put_segments(self._pool, doc_id, summarizer, stored)

    # -- library --------------------------------------------------------------------------

    def delete_document(self, doc_id: str) -> str | None:
        return library.delete_document(self._pool, doc_id)

    def rename_document(self, doc_id: str, title: str) -> bool:
        return library.rename_document(self._pool, doc_id, title)

    def add_holder(self, doc_id: str, holder: str) -> None:
        library.add_holder(self._pool, doc_id, holder)

    def remove_holder(self, doc_id: str, holder: str) -> bool:
        return library.remove_holder(self._pool, doc_id, holder)

    def document_holders(self, doc_id: str) -> list[str]:
        return library.document_holders(self._pool, doc_id)

    def document_screen(self, doc_id: str) -> ScreenResult | None:
        return library.document_screen(self._pool, doc_id)

    def flagged_documents(self) -> dict[str, ScreenResult]:
        return library.flagged_documents(self._pool)

    # -- jobs -----------------------------------------------------------------------------

    def add_job(self, draft: JobDraft, now: float, limits: UploadLimits) -> Job:
        return jobs.add_job(self._pool, draft, now, limits)

    def claim_job(self, worker: str, now: float, lease_s: float) -> Job | None:
        return jobs.claim_job(self._pool, worker, now, lease_s)

    def update_job(
        self,
        job_id: int,
        worker: str,
        now: float,
        lease_s: float,
        *,
        stage: str | None = None,
        pages_done: int | None = None,
        pages_total: int | None = None,
    ) -> bool:
        return jobs.update_job(
            self._pool,
            job_id,
            worker,
            now,
            lease_s,
            stage=stage,
            pages_done=pages_done,
            pages_total=pages_total,
        )

    def finish_job(
        self,
        job_id: int,
        worker: str,
        now: float,
        *,
        doc_id: str | None = None,
        reason: str | None = None,
        message: str | None = None,
    ) -> bool:
        return jobs.finish_job(
            self._pool, job_id, worker, now, doc_id=doc_id, reason=reason, message=message
        )

    def job(self, job_id: int) -> Job | None:
        return jobs.job(self._pool, job_id)

    def jobs(
        self, owner: str | None = None, *, everyone: bool = True, limit: int = 200
    ) -> list[Job]:
        return jobs.jobs(self._pool, owner, everyone=everyone, limit=limit)

    # -- quota counters -------------------------------------------------------------------

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return quota.try_admit(self._pool, client_key, now, limits)

    def quota_usage(self, client_key: str, now: float) -> QuotaUsage:
        return quota.usage(self._pool, client_key, now)

    # -- accounts -------------------------------------------------------------------------

    def add_user(self, user: UserRecord) -> None:
        accounts.add_user(self._pool, user)

    def user(self, name: str) -> UserRecord | None:
        return accounts.user(self._pool, name)

    def users(self) -> list[UserRecord]:
        return accounts.users(self._pool)

    def user_count(self) -> int:
        return accounts.user_count(self._pool)

    def remove_user(self, name: str) -> bool:
        return accounts.remove_user(self._pool, name)

    def set_password(self, name: str, password_hash: str) -> bool:
        return accounts.set_password(self._pool, name, password_hash)

    def add_session(self, session: SessionRecord) -> None:
        accounts.add_session(self._pool, session)

    def session(self, id_hash: str) -> SessionRecord | None:
        return accounts.session(self._pool, id_hash)

    def remove_session(self, id_hash: str) -> None:
        accounts.remove_session(self._pool, id_hash)

    def add_token(self, token: ApiTokenRecord) -> None:
        accounts.add_token(self._pool, token)

    def token_by_hash(self, secret_hash: str) -> ApiTokenRecord | None:
        return accounts.token_by_hash(self._pool, secret_hash)

    def tokens(self, user: str | None = None) -> list[ApiTokenRecord]:
        return accounts.tokens(self._pool, user)

    def revoke_token(self, token_id: str, revoked_at: str) -> bool:
        return accounts.revoke_token(self._pool, token_id, revoked_at)
