"""The store Protocol: everything the pipeline asks of a backend, and both backends do all of it.

:class:`Store` is composed of one small Protocol per concept: :class:`Documents` (the index's
documents, units and chunks), :class:`SearchArms` (full-text and dense), :class:`TokenSigns`
(late interaction's packed token signs), :class:`AnswerLog` (answers as they were shown, for
``truthbase verify``), :class:`SegmentIndex` (segment indexes and stored tables of contents)
and :class:`QuotaCounters` (atomic request admission), :class:`Accounts` (users, login
sessions, API tokens), :class:`Collections` (the named collections of documents users keep),
:class:`ThreadLog` (saved threads), :class:`ThreadShares` (their links).
:class:`DocumentReader` is the read half of :class:`Documents`; :class:`Searchable` (what
retrieval and answering read) and :class:`SegmentStore` (what the segment tools use) combine
the small ones. A caller takes the smallest Protocol that has what it calls; both backends are
every one of them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..errors import InvalidInput, TruthBaseError, Unavailable
from ..jobs import Job, JobDraft, UploadLimits
from ..model import Chunk, DocumentInfo, TocEntry, Unit, Visibility
from ..people import (
    ApiTokenRecord,
    CollectionRecord,
    FeedbackRecord,
    NewFeedback,
    SessionRecord,
    UserRecord,
)
from ..quota import Admission, QuotaLimits, QuotaUsage
from ..records import (
    ArmHit,
    FloatMatrix,
    IndexedDocument,
    IndexEmbedder,
    ScreenResult,
    StoredAnswer,
    StoredSegments,
    check_sign_blob,
)
from ..turns import StoredTurn, ThreadCount, ThreadInfo

__all__ = [
    "Accounts",
    "AnswerLog",
    "Collections",
    "DocumentAdmin",
    "DocumentReader",
    "Documents",
    "FeedbackLog",
    "Jobs",
    "QuotaCounters",
    "SearchArms",
    "Searchable",
    "SegmentIndex",
    "SegmentStore",
    "Store",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "ThreadLog",
    "ThreadShares",
    "TokenSigns",
    "check_same_embedder",
    "check_token_sign_map",
]


class StoreError(TruthBaseError):
    """A store cannot be opened or used as asked."""


class StoreUnavailable(StoreError, Unavailable):
    """The store's server cannot serve now (PostgreSQL stopped, restarting, or too slow): try
    again later; nothing of the request was written."""


class StoreFull(StoreError):
    """The index cannot grow (its disk is full, or a file-size limit was reached): the write
    was rolled back whole, and every write after it would fail the same way, so a batch stops."""


class DocumentReader(Protocol):
    """The documents of an index as the stages after ingest read them."""

    def has_document(self, doc_id: str) -> bool: ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def document(self, doc_id: str) -> DocumentInfo | None: ...

    def unit(self, doc_id: str, index: int) -> Unit | None: ...

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are left out)."""
        ...

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """The text of each chunk with one of these ids (missing ids are left out): what
        pseudo-relevance feedback reads, without the rects a whole :class:`Chunk` decodes."""
        ...

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """The document id of each chunk with one of these ids (missing ids are left out):
        what the document prior of retrieval groups its candidates by
        (:mod:`truthbase.retrieve.documents`)."""
        ...

    def document_titles(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """The title of each document with one of these ids (missing ids are left out): what a
        search hit shows, read without the rest of :meth:`document`; a title several documents
        bear is followed by each one's file name (:func:`truthbase.model.told_apart`)."""
        ...

    def index_embedder(self) -> IndexEmbedder | None: ...

    def languages(self) -> list[str | None]:
        """The languages of the index's units and titles (ISO 639-1; None for unknown), sorted:
        the languages a question's full-text terms are made in (:mod:`truthbase.text.fulltext`)."""
        ...

    def counts(self) -> dict[str, int]:
        """Rows of documents, units, chunks and token_chunks (chunks with token signs)."""
        ...


class Documents(DocumentReader, Protocol):
    """The documents of an index, read and written. Every write of one document is one
    transaction."""

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        """Write the document, its units, chunks, full text, vectors (of chunks and of their
        sentence windows), token signs and screen verdict in one transaction. StoreError when
        the index was built with another embedder. ``replace``: the document is in the index
        and its rows are replaced in the same transaction (a re-ingest; its holders stay).
        ``indexed.batches``: its chunks are written a batch at a time as they come, in the same
        transaction (an error raised by them rolls it all back)."""
        ...

    def set_document_access(self, doc_id: str, owner: str | None, visibility: Visibility) -> bool:
        """Set a document's owner (a user id) and visibility (:mod:`truthbase.access` decides
        who may); False when there is no such document. InvalidInput for a private document
        without an owner."""
        ...


class SearchArms(Protocol):
    """The two retrieval arms; :func:`truthbase.retrieve.hybrid.search` fuses them."""

    def fts_search(
        self,
        match_expression: str,
        limit: int,
        title_weight: float = 0.0,
        doc_ids: Collection[str] | None = None,
    ) -> list[ArmHit]:
        """BM25 over chunk text (FTS5's bm25() on both backends), plus the document title at
        ``title_weight`` (0: the title is not searched); ``match_expression`` as
        :func:`truthbase.retrieve.fts_query.build_fts_query` writes it. ``doc_ids`` (None:
        every document) limits the arm to the chunks of those documents, inside the query:
        the top ``limit`` of what the caller may see (:func:`truthbase.access.visible_ids`)."""
        ...

    def dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        """Chunks by cosine to ``query_vector``: a chunk scores the best of its own vector and
        its windows' vectors (max-sim); ``doc_ids`` as for :meth:`fts_search`."""
        ...


class TokenSigns(Protocol):
    """Per chunk, the signs of its token vectors as :func:`truthbase.retrieve.late.pack_signs`
    packs them (written with the document, or backfilled later)."""

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed token signs of those chunks that have them (chunks without token data
        and unknown ids are absent)."""
        ...

    def chunks_without_token_signs(self) -> list[int]:
        """Ids of the chunks that have no token signs (ingested before they were stored, or
        by an embedder without token vectors), ascending."""
        ...

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        """Store token signs for chunks that lack them, in one transaction; a chunk that has
        them already keeps its own. Raises InvalidInput, writing nothing, for an unknown chunk id
        or a blob that is not whole token rows of the index's dim. Returns the rows added."""
        ...


class AnswerLog(Protocol):
    """The answers that were shown (for ``truthbase verify``)."""

    def add_answer(self, question: str, answer: dict[str, Any], asked_by: str | None = None) -> int:
        """Keep an answer's JSON as it was shown (``asked_by``: its user's id); returns its
        id."""
        ...

    def answer(self, answer_id: int) -> StoredAnswer | None:
        """The stored answer ``answer_id``, or None."""
        ...

    def answers(self) -> list[StoredAnswer]:
        """Every stored answer, oldest first."""
        ...


class FeedbackLog(Protocol):
    """Users' reports on shown answers (:mod:`truthbase.app.feedback` decides who may)."""

    def put_feedback(self, report: NewFeedback) -> int:
        """Keep ``report``, replacing its user's earlier one of the same group on the same
        answer and citation; returns its id."""
        ...

    def feedback(
        self,
        *,
        user_id: str | None = None,
        everyone: bool = False,
        limit: int | None = None,
        answer_id: int | None = None,
    ) -> list[FeedbackRecord]:
        """Reports, newest first: ``everyone``'s or ``user_id``'s (on answer ``answer_id``
        only, when given); at most ``limit``."""
        ...


class ThreadLog(Protocol):
    """Saved threads (:mod:`truthbase.app.threads` says whose): each turn's question and its
    answer as it was shown. ``owner`` is a user id, None for the local user or the operator."""

    def add_thread(self, thread_id: str, owner: str | None, title: str) -> ThreadInfo: ...

    def thread(self, thread_id: str) -> ThreadInfo | None: ...

    def threads(self, owner: str | None, words: Sequence[str] = ()) -> list[ThreadInfo]:
        """``owner``'s threads, newest first; with ``words``, those whose questions or answers
        hold every one of them as a whole word (:func:`truthbase.turns.search_terms`)."""
        ...

    def thread_turns(self, thread_id: str) -> list[StoredTurn]: ...

    def add_turn(
        self,
        thread_id: str,
        question: str,
        answer: dict[str, Any],
        *,
        answer_id: int | None = None,
        resolution: dict[str, Any] | None = None,
    ) -> StoredTurn | None:
        """Append a turn (None when the thread is gone); the thread becomes the newest."""
        ...

    def rename_thread(self, thread_id: str, title: str) -> bool: ...

    def delete_thread(self, thread_id: str) -> bool: ...

    def thread_counts(self) -> list[ThreadCount]:
        """Per owner, how many threads and turns."""
        ...


class ThreadShares(Protocol):
    """Read-only links to saved threads (:mod:`truthbase.app.shares` says who may open one):
    each an unguessable token of one thread, open until revoked."""

    def add_share(self, token: str, thread_id: str) -> None: ...

    def open_share(self, thread_id: str) -> str | None:
        """The token of the thread's share that is not revoked, None when there is none."""
        ...

    def shared_thread_id(self, token: str) -> str | None:
        """The thread ``token`` opens: None for an unknown or revoked token."""
        ...

    def revoke_shares(self, thread_id: str) -> int:
        """Revoke every open share of the thread; how many were open."""
        ...


class SegmentIndex(Protocol):
    """Segment indexes (:mod:`truthbase.segments`), cached per document and summarizer id;
    writing one replaces the previous one in one transaction."""

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
        ...

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None: ...

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None: ...


class Searchable(DocumentReader, SearchArms, TokenSigns, Protocol):
    """The index as retrieval and answering read it (:mod:`truthbase.retrieve`,
    :mod:`truthbase.answer`): documents, units and chunks, the two arms, token signs."""


class SegmentStore(Searchable, SegmentIndex, Protocol):
    """The index as the segment tools (:mod:`truthbase.segments`) use it: what retrieval
    reads, and the segment indexes they build and cache."""


class QuotaCounters(Protocol):
    """Request counters (:mod:`truthbase.quota`), shared by every process using the index."""

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        """Admit one request of ``client_key`` at Unix time ``now``, or refuse it, atomically:
        every counter that has a limit goes up by one, or none does (a refusal carries the
        seconds until every refusing window has rolled over). Unlimited: admitted, no I/O.
        ``limits.agent_per_day`` counts too when set (pass ``limits.for_request(agent)``)."""
        ...

    def quota_usage(self, client_key: str, now: float) -> QuotaUsage:
        """What ``client_key`` has been counted in the windows of ``now``."""
        ...


class DocumentAdmin(Protocol):
    """Managing documents: delete, rename, the users who hold a document besides its owner
    (one document per content, :mod:`truthbase.ingest.worker`), and the prompt-injection screen's
    verdicts (:mod:`truthbase.ingest.screen`)."""

    def delete_document(self, doc_id: str) -> str | None:
        """Remove the document and everything of it (units, chunks, full text, vectors, token
        signs, segments, verdict, holders) in one transaction; search sees none of it after the
        commit. Returns its stored path (the caller removes an uploaded file), None when there
        was no such document. Stored answers are kept as they were."""
        ...

    def rename_document(self, doc_id: str, title: str) -> bool:
        """A new title (listing and full text); False when there is no such document."""
        ...

    def add_holder(self, doc_id: str, holder: str) -> None:
        """The user with id ``holder`` holds the document too (no-op when there is no such
        document)."""
        ...

    def remove_holder(self, doc_id: str, holder: str) -> bool: ...

    def document_holders(self, doc_id: str) -> list[str]: ...

    def document_screen(self, doc_id: str) -> ScreenResult | None: ...

    def flagged_documents(self) -> dict[str, ScreenResult]:
        """The verdicts of the documents the screen flagged, by document id."""
        ...


class Jobs(Protocol):
    """Ingest jobs (:mod:`truthbase.jobs`): queued by uploads, claimed by workers of any
    process (each job by one worker at a time; SQLite's writer lock, PostgreSQL's
    ``FOR UPDATE SKIP LOCKED``). Times are Unix seconds given by the caller."""

    def add_job(self, draft: JobDraft, now: float, limits: UploadLimits) -> Job:
        """Queue a job if its owner's uploads fit ``limits``, checked in the same transaction
        (LimitExceeded otherwise, nothing queued)."""
        ...

    def claim_job(self, worker: str, now: float, lease_s: float) -> Job | None:
        """The oldest queued job, or a running one whose lease ran out, now ``worker``'s until
        ``now + lease_s``; a lost job out of attempts fails as ``worker_lost`` instead."""
        ...

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
        """Progress and heartbeat; False when the job is no longer ``worker``'s."""
        ...

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
        """Done (``doc_id``) or failed (``reason``); False when the job is not ``worker``'s."""
        ...

    def job(self, job_id: int) -> Job | None: ...

    def jobs(
        self, owner: str | None = None, *, everyone: bool = True, limit: int = 200
    ) -> list[Job]:
        """Newest first: everyone's, or ``owner``'s only."""


class Accounts(Protocol):
    """Users, their login sessions and their API tokens. Documents, holders, jobs, sessions and
    tokens name a user by their stable id (:attr:`~truthbase.people.UserRecord.id`), never by
    the name. Removing a user removes their sessions, tokens and holds; the documents they own
    keep their id (:func:`truthbase.accounts.remove_user` decides what becomes of them)."""

    def add_user(self, user: UserRecord) -> None:
        """InvalidInput when a user of that name exists."""
        ...

    def user(self, name: str) -> UserRecord | None: ...

    def user_by_id(self, user_id: str) -> UserRecord | None:
        """The user whose :attr:`~truthbase.people.UserRecord.id` this is (None: removed)."""
        ...

    def users(self) -> list[UserRecord]:
        """Every user, by name."""
        ...

    def user_count(self) -> int: ...

    def remove_user(self, name: str) -> bool:
        """The user, their sessions, tokens and holds; False when there is no such user."""
        ...

    def set_password(self, name: str, password_hash: str) -> bool:
        """Replace the hash and end every session of the user; False when there is no such
        user."""
        ...

    def add_session(self, session: SessionRecord) -> None:
        """Keep a new session (and forget sessions that expired before it began)."""
        ...

    def session(self, id_hash: str) -> SessionRecord | None:
        """The session with that hash, expired or not (the caller compares the time)."""
        ...

    def remove_session(self, id_hash: str) -> None: ...

    def add_token(self, token: ApiTokenRecord) -> None: ...

    def token_by_hash(self, secret_hash: str) -> ApiTokenRecord | None: ...

    def tokens(self, user_id: str | None = None) -> list[ApiTokenRecord]:
        """Every token (of the user with id ``user_id``), oldest first, revoked ones included."""
        ...

    def revoke_token(self, token_id: str, revoked_at: str) -> bool:
        """False when there is no such token or it was revoked already."""
        ...


class Collections(Protocol):
    """Named collections of document ids, each its user's (``user_id`` None: the operator's);
    a name is unique per user. Removing a user removes their collections (ON DELETE CASCADE)."""

    def collections(self, user_id: str | None) -> list[CollectionRecord]:
        """The user's collections, by name."""
        ...

    def collection(self, user_id: str | None, name: str) -> CollectionRecord | None: ...

    def add_collection(self, collection: CollectionRecord) -> None:
        """InvalidInput when the user has a collection of that name already."""
        ...

    def rename_collection(self, user_id: str | None, name: str, new_name: str) -> bool:
        """False when there is no such collection; InvalidInput when ``new_name`` is taken."""
        ...

    def change_collection(
        self,
        user_id: str | None,
        name: str,
        *,
        add: Collection[str] = (),
        remove: Collection[str] = (),
    ) -> bool:
        """Add and remove document ids (one transaction); False when there is no such
        collection."""
        ...

    def remove_collection(self, user_id: str | None, name: str) -> bool:
        """False when there is no such collection."""
        ...


class Store(
    Documents,
    SearchArms,
    TokenSigns,
    AnswerLog,
    FeedbackLog,
    ThreadLog,
    ThreadShares,
    SegmentIndex,
    QuotaCounters,
    Accounts,
    Collections,
    DocumentAdmin,
    Jobs,
    Protocol,
):
    """A TruthBase index: SQLite (:class:`truthbase.store.sqlite.SQLiteStore`) or PostgreSQL
    (:class:`truthbase.store.postgres.PostgresStore`)."""

    def close(self) -> None: ...


def check_token_sign_map(signs: Mapping[int, bytes], embedder: IndexEmbedder | None) -> None:
    """What every backend checks before ``add_token_signs`` writes."""
    if not signs:
        return
    if embedder is None:
        raise InvalidInput("the index has no chunks (no embedder recorded) to add token signs to")
    for chunk_id, blob in signs.items():
        check_sign_blob(f"chunk id {chunk_id}", blob, embedder.token_bits)


def check_same_embedder(current: IndexEmbedder, embedder: IndexEmbedder) -> None:
    """Vectors of one index come from one embedder: refuse a document embedded by another."""
    if (current.model_id, current.dim) != (embedder.model_id, embedder.dim):
        raise StoreError(
            f"the index was built with {current.model_id} (dim {current.dim}); "
            f"cannot add vectors from {embedder.model_id} (dim {embedder.dim})"
        )
    if current.token_code != embedder.token_code:
        raise StoreError(
            f"the index stores token codes {current.token_code!r}; cannot add a document whose "
            f"token vectors were packed as {embedder.token_code!r}"
        )
