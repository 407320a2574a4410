"""The embedded default store: one SQLite file, FTS5 for full text, vectors beside it.

One module per concept, each a set of functions over a :class:`~.connection.Database` (the
connection, its lock, transactions): :mod:`.connection` (opening, schema and its migrations),
:mod:`.documents`, :mod:`.search` (the two arms), :mod:`.tokens`, :mod:`.answers`,
:mod:`.segments`, :mod:`.quota` and :mod:`.accounts`. :class:`SQLiteStore` puts them behind the
:class:`~truthbase.store.base.Store` Protocol; column values are :mod:`truthbase.store.codec`'s.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
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
from . import accounts, answers, documents, jobs, library, search, segments, tokens
from .connection import ADDITIVE_FROM, SCHEMA_VERSION, Database
from .quota import QuotaTable

__all__ = ["ADDITIVE_FROM", "SCHEMA_VERSION", "SQLiteStore"]


class SQLiteStore:
    """A TruthBase index in one SQLite file: each thread reads on a connection of its own (WAL),
    writes go one at a time (:class:`.connection.Database`), and any number of stores, in any
    number of processes, may open the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = Database(path)
        self._vectors = search.VectorCache()
        self._quota = QuotaTable()
        # Every search asks for the index's languages; they change only with a document write.
        self._languages: tuple[int, list[str | None]] | None = None

    def close(self) -> None:
        self._db.close()

    # -- documents ------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        return documents.has_document(self._db, doc_id)

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        documents.add_document(self._db, indexed, replace=replace)

    def list_documents(self) -> list[DocumentInfo]:
        return documents.list_documents(self._db)

    def document(self, doc_id: str) -> DocumentInfo | None:
        return documents.document(self._db, doc_id)

    def unit(self, doc_id: str, index: int) -> Unit | None:
        return documents.unit(self._db, doc_id, index)

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        return documents.chunks(self._db, chunk_ids)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        return documents.chunk_texts(self._db, chunk_ids)

    def index_embedder(self) -> IndexEmbedder | None:
        return documents.get_index_embedder(self._db)

    def languages(self) -> list[str | None]:
        with self._db.lock:
            generation = self._db.generation()
        if self._languages is None or self._languages[0] != generation:
            self._languages = (generation, documents.languages(self._db))
        return list(self._languages[1])

    def counts(self) -> dict[str, int]:
        return documents.counts(self._db)

    def set_document_access(self, doc_id: str, owner: str | None, visibility: Visibility) -> bool:
        return documents.set_document_access(self._db, doc_id, owner, visibility)

    # -- search arms ----------------------------------------------------------------------

    def fts_search(
        self,
        match_expression: str,
        limit: int,
        title_weight: float = 0.0,
        doc_ids: Collection[str] | None = None,
    ) -> list[ArmHit]:
        return search.fts_search(self._db, match_expression, limit, title_weight, doc_ids)

    def dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        return search.dense_search(self._db, self._vectors, query_vector, limit, doc_ids)

    # -- token signs ----------------------------------------------------------------------

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        return tokens.token_signs(self._db, chunk_ids)

    def chunks_without_token_signs(self) -> list[int]:
        return tokens.chunks_without_token_signs(self._db)

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        return tokens.add_token_signs(self._db, signs)

    # -- answer log -----------------------------------------------------------------------

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        return answers.add_answer(self._db, question, answer)

    def answers(self) -> list[StoredAnswer]:
        return answers.answers(self._db)

    # -- segment index --------------------------------------------------------------------

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        return segments.document_toc(self._db, doc_id)

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        return segments.segments(self._db, doc_id, summarizer)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        segments.put_segments(self._db, doc_id, summarizer, stored)

    # -- library --------------------------------------------------------------------------

    def delete_document(self, doc_id: str) -> str | None:
        return library.delete_document(self._db, doc_id)

    def rename_document(self, doc_id: str, title: str) -> bool:
        return library.rename_document(self._db, doc_id, title)

    def add_holder(self, doc_id: str, holder: str) -> None:
        library.add_holder(self._db, doc_id, holder)

    def remove_holder(self, doc_id: str, holder: str) -> bool:
        return library.remove_holder(self._db, doc_id, holder)

    def document_holders(self, doc_id: str) -> list[str]:
        return library.document_holders(self._db, doc_id)

    def document_screen(self, doc_id: str) -> ScreenResult | None:
        return library.document_screen(self._db, doc_id)

    def flagged_documents(self) -> dict[str, ScreenResult]:
        return library.flagged_documents(self._db)

    # -- jobs -----------------------------------------------------------------------------

    def add_job(self, draft: JobDraft, now: float, limits: UploadLimits) -> Job:
        return jobs.add_job(self._db, draft, now, limits)

    def claim_job(self, worker: str, now: float, lease_s: float) -> Job | None:
        return jobs.claim_job(self._db, worker, now, lease_s)

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
            self._db,
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
            self._db, job_id, worker, now, doc_id=doc_id, reason=reason, message=message
        )

    def job(self, job_id: int) -> Job | None:
        return jobs.job(self._db, job_id)

    def jobs(
        self, owner: str | None = None, *, everyone: bool = True, limit: int = 200
    ) -> list[Job]:
        return jobs.jobs(self._db, owner, everyone=everyone, limit=limit)

    # -- quota counters -------------------------------------------------------------------

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return self._quota.try_admit(self._db, client_key, now, limits)

    def quota_usage(self, client_key: str, now: float) -> QuotaUsage:
        return self._quota.usage(self._db, client_key, now)

    # -- accounts -------------------------------------------------------------------------

    def add_user(self, user: UserRecord) -> None:
        accounts.add_user(self._db, user)

    def user(self, name: str) -> UserRecord | None:
        return accounts.user(self._db, name)

    def users(self) -> list[UserRecord]:
        return accounts.users(self._db)

    def user_count(self) -> int:
        return accounts.user_count(self._db)

    def remove_user(self, name: str) -> bool:
        return accounts.remove_user(self._db, name)

    def set_password(self, name: str, password_hash: str) -> bool:
        return accounts.set_password(self._db, name, password_hash)

    def add_session(self, session: SessionRecord) -> None:
        accounts.add_session(self._db, session)

    def session(self, id_hash: str) -> SessionRecord | None:
        return accounts.session(self._db, id_hash)

    def remove_session(self, id_hash: str) -> None:
        accounts.remove_session(self._db, id_hash)

    def add_token(self, token: ApiTokenRecord) -> None:
        accounts.add_token(self._db, token)

    def token_by_hash(self, secret_hash: str) -> ApiTokenRecord | None:
        return accounts.token_by_hash(self._db, secret_hash)

    def tokens(self, user: str | None = None) -> list[ApiTokenRecord]:
        return accounts.tokens(self._db, user)

    def revoke_token(self, token_id: str, revoked_at: str) -> bool:
        return accounts.revoke_token(self._db, token_id, revoked_at)
