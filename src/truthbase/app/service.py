"""The application service: every use case of TruthBase, with its policy, for one viewer.

The doors (the web app's routes, the CLI's commands, the MCP tools, the Python API) only
translate requests and responses: what an answer may read, who may use agent mode, when a
request is counted against the quota, that an answer is recorded, what a viewer is shown of
its events, and who may rename, share, re-ingest or delete a document are decided here once.

* Reads go through :mod:`truthbase.access`: a document the viewer may not see is NotFound,
  exactly as a missing one, on every door.
* ``documents`` (ids or unique prefixes of at least 4 characters; ``doc`` is one) and
  ``collection`` (the name of one of the viewer's :mod:`.collections`) limit an answer's
  sources, or a search, in every mode, by the one scope rule
  (:func:`truthbase.access.scope_of`): a hidden document is NotFound, an empty scope
  InvalidInput.
* Agent mode is for those who see everything when ``server.agent_mode`` is ``admins``
  (:class:`~.errors.Forbidden` otherwise).
* A request that comes over a network (its door passes the client's address) is counted
  against the quota before any model call (:mod:`.admission`); one that does not is not.
* A finished answer is recorded (for ``truthbase verify``) before its ``done`` event is given.
* :meth:`Service.shown` is an event as the viewer is shown it (:mod:`.redaction`).
* A question asked in a thread (its earlier turns, as the client keeps them) is resolved
  against them first (:func:`truthbase.conversation.resolve_question`: the configured model's
  standalone rewrite when ``llm.followup_rewrite`` is on and the mode is not extractive, else the
  resolution without a model); the ``done`` event says what was searched (``searched_for``).
* A saved thread (:mod:`.threads`) is its owner's alone; a question asked in one follows its
  stored turns, and the finished answer is appended to it (or to a new one) before ``done``,
  which names it (``thread``). Admins see counts of threads, never their contents.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Self

from ..access import DocScope, require_visible, scope_of, sees_everything, visible_ids
from ..accounts import NewToken, Removal, UserUsage
from ..answer import DoneEvent, record_answer
from ..answer.model import Event
from ..answer.policy import resolve_chat_mode
from ..cite.verify import ClaimVerdict
from ..cite.verify import verify_claim as _verify_claim
from ..config import ServerSettings, Settings, data_folder
from ..conversation import resolve_question
from ..embed import Embedder
from ..errors import InvalidInput, NotFound
from ..jobs import Job, UploadLimits
from ..llm.chain import load_stage_model
from ..llm.judge import ModelJudge, VerdictCache, judge_for
from ..model import DocumentInfo, DocumentKind
from ..modes import answer_events
from ..people import OPERATOR, ApiTokenRecord, CollectionRecord, UserRecord, Viewer
from ..records import MAX_QUESTION_CHARS, MAX_QUOTE_CHARS, ResolvedMode, SearchHit
from ..retrieve.hybrid import search as _search
from ..store import Store
from ..text.valid import has_visible, quoted, require_text
from ..turns import Resolution, Turn
from . import accounts, lifecycle
from . import collections as user_collections
from . import threads as saved_threads
from .admission import SEARCH, admit, chat_limits, search_limits
from .errors import Forbidden
from .kept import KeptAnswers
from .passages import Passage, UnitSpan, read_passage, read_span, read_unit
from .redaction import failure_event, shown_event
from .uploads import ReceivedFile, UploadResult, parse_visibility, queue_uploads, remove_received

__all__ = ["AGENT_REFUSED", "AnswerPlan", "SearchMode", "Service", "agent_allowed"]

#: The retrieval arms a search can use: both fused, or one alone.
SearchMode = Literal["hybrid", "fts", "dense"]

AGENT_REFUSED = "agent mode is for admins here (server.agent_mode)"


def agent_allowed(viewer: Viewer, settings: ServerSettings) -> bool:
    """Whether ``viewer`` may ask in agent mode: everyone, or (``server.agent_mode = "admins"``)
    only those who see everything (admins, the operator, the local user)."""
    return settings.agent_mode != "admins" or sees_everything(viewer)


@dataclass(frozen=True, slots=True)
class AnswerPlan:
    """One answer, decided before anything runs: the question, the mode (resolved once), the
    documents its sources may come from, how many sources (None: ``retrieval.k``), and the
    earlier turns of its thread (oldest first; none for a question on its own); whether the
    finished answer is kept in a saved thread, and in which (None: a new one)."""

    question: str
    mode: ResolvedMode
    scope: DocScope
    k: int | None = None
    history: tuple[Turn, ...] = ()
    #: Keep the finished answer in a saved thread: ``thread`` (the viewer's), or a new one.
    keep: bool = False
    thread: str | None = None


def _match(documents: Sequence[DocumentInfo], doc: str) -> DocumentInfo:
    """The one of ``documents`` (the viewer's) whose id is ``doc`` or starts with it."""
    wanted = doc.strip().lower()
    if len(wanted) < 4:
        raise InvalidInput(f"document id {quoted(doc)}: give at least 4 characters of it")
    matches = [d for d in documents if d.id.startswith(wanted)]
    if not matches:
        raise NotFound(f"no document {doc}")
    if len(matches) > 1:
        raise InvalidInput(f"{len(matches)} document ids start with {quoted(doc)}; give more of it")
    return matches[0]


class Service(KeptAnswers):
    """The use cases over one open index, as ``viewer`` may run them.

    ``embedder`` gives the embedder (loaded on first use by whoever owns it). A service is
    cheap: the web app makes one per request (:meth:`for_viewer` copies one)."""

    def __init__(
        self,
        store: Store | None,
        settings: Settings,
        embedder: Callable[[], Embedder],
        viewer: Viewer = OPERATOR,
    ) -> None:
        self._store = store
        self.settings: Settings = settings
        self._embedder_of = embedder
        self.viewer: Viewer = viewer
        # One cache of judge verdicts per service, shared by its per-viewer copies.
        self._verdicts = VerdictCache(settings.support.judge_cache_size)

    def for_viewer(self, viewer: Viewer) -> Self:
        """This service as ``viewer`` may run it, over the same open index."""
        view = copy.copy(self)
        view.viewer = viewer
        return view

    @property
    def store(self) -> Store:
        """The open store (SQLite or PostgreSQL)."""
        if self._store is None:
            raise InvalidInput("this library is closed")
        return self._store

    def judge(self, choice: str | None = None) -> ModelJudge | None:
        """The support judge ``support.judge`` (or ``choice``: off, auto or llm) asks for (None:
        off, or auto without a chat model); JudgeNotConfigured for ``llm`` without one."""
        return judge_for(
            self.settings.support, self.settings.llm, choice=choice, cache=self._verdicts
        )

    @property
    def embedder(self) -> Embedder:
        """The embedder of the settings (loaded on first use), or the one passed in."""
        return self._embedder_of()

    # -- documents --------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        """The documents this viewer may see."""
        documents = self.store.list_documents()
        scope = visible_ids(self.viewer, documents)
        return [d for d in documents if scope is None or d.id in scope]

    def document(self, doc: str) -> DocumentInfo:
        """The visible document whose id is ``doc`` or starts with it (at least 4 characters);
        NotFound when there is none (or only hidden ones), InvalidInput when several match."""
        return _match(self.documents(), doc)

    def document_ids(self, docs: Sequence[str]) -> list[str]:
        """The full ids of the visible documents ``docs`` names (ids or unique prefixes), each
        as :meth:`document` finds it, over one listing."""
        documents = self.documents() if docs else []
        return [_match(documents, d).id for d in docs]

    def visible(self, doc_id: str) -> DocumentInfo:
        """The document of the full id ``doc_id`` when the viewer may see it; NotFound (as for
        a missing one) otherwise."""
        return require_visible(self.viewer, self.store.document(doc_id), doc_id)

    def scope(
        self,
        doc: str | None = None,
        *,
        documents: Sequence[str] = (),
        collection: str | None = None,
    ) -> DocScope:
        """The documents a read may touch (None: all, for those who see everything, without
        listing them); limited by :func:`~truthbase.access.scope_of` to ``doc`` and
        ``documents`` (ids or unique prefixes) and the members of the viewer's ``collection``
        when any is given."""
        asked = (*documents, doc) if doc is not None else tuple(documents)
        for name in (*asked, collection or ""):
            require_text(name, "document or collection name")
        if not asked and collection is None:
            if sees_everything(self.viewer):
                return None
            return visible_ids(self.viewer, self.store.list_documents())
        listed = self.documents()
        visible = frozenset(d.id for d in listed)
        named = [_match(listed, d).id for d in asked]
        members = (
            user_collections.collection_members(self.store, self.viewer, collection)
            if collection is not None
            else None
        )
        return scope_of(visible, named, members)

    # -- search -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        doc: str | None = None,
        documents: Sequence[str] = (),
        collection: str | None = None,
        mode: SearchMode = "hybrid",
        address: str | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` (default ``retrieval.k``) among the documents the
        viewer may see (only those of ``doc``, ``documents`` and ``collection`` when given:
        :meth:`scope`), best first; counted against the search quota when it comes from
        ``address``."""
        if not has_visible(require_text(query, "query", max_chars=MAX_QUESTION_CHARS)):
            raise InvalidInput("the query is empty")
        admit(self.store, self.viewer, address, search_limits(self.settings.quota), SEARCH)
        result = _search(
            self.store,
            self.embedder,
            query,
            self.settings.retrieval,
            k=k,
            mode=mode,
            doc_ids=self.scope(doc, documents=documents, collection=collection),
        )
        return list(result.hits)

    # -- answers ----------------------------------------------------------------------------

    def plan_answer(
        self,
        question: str,
        *,
        mode: str | None = None,
        doc: str | None = None,
        documents: Sequence[str] = (),
        collection: str | None = None,
        k: int | None = None,
        history: Sequence[Turn] = (),
        thread: str | None = None,
        keep: bool = False,
    ) -> AnswerPlan:
        """The answer to run, or why not: InvalidInput for an empty question or a mode the
        settings cannot run (``llm`` without an LLM), Forbidden for agent mode where it is not
        the viewer's, NotFound for a document the viewer cannot see (or a collection they do
        not keep), InvalidInput for a scope with no document left (:meth:`scope`).
        ``history``: the earlier turns of the thread the question follows (oldest first).
        ``thread``: the viewer's saved thread the question follows instead (its stored turns
        are the history; NotFound for anyone else's; InvalidInput with ``history`` too); the
        answer is appended to it. ``keep`` without ``thread``: the answer starts a new saved
        thread."""
        if not has_visible(require_text(question, "question", max_chars=MAX_QUESTION_CHARS)):
            raise InvalidInput("the question is empty")
        chosen = resolve_chat_mode(mode, self.settings.llm)
        if chosen == "agent" and not agent_allowed(self.viewer, self.settings.server):
            raise Forbidden(AGENT_REFUSED)
        scope = self.scope(doc, documents=documents, collection=collection)
        if thread is not None:
            if history:
                raise InvalidInput("give either a thread or a history, not both")
            history = saved_threads.continue_thread(self.store, self.viewer, thread)
        keep = keep or thread is not None
        return AnswerPlan(question, chosen, scope, k, tuple(history), keep, thread)

    def resolve(self, plan: AnswerPlan) -> Resolution:
        """What ``plan``'s question is searched as after its thread: the configured model's
        standalone rewrite (``llm.followup_rewrite``, not in extractive mode; it fails open)
        or the resolution without a model (:func:`truthbase.conversation.resolve_question`).
        Documents the viewer may not see are never a prior (the search could not use them)."""
        llm = self.settings.llm
        use_model = llm.followup_rewrite and plan.mode != "extractive" and bool(plan.history)
        model = load_stage_model(llm) if use_model else None
        titles = (
            {
                d.id: d.title
                for d in self.store.list_documents()
                if plan.scope is None or d.id in plan.scope
            }
            if plan.history
            else {}
        )
        resolution = resolve_question(
            plan.question,
            plan.history,
            model=model,
            timeout=llm.followup_timeout_s,
            titles=titles,
        )
        if plan.scope is None:
            return resolution
        priors = tuple(d for d in resolution.prior_documents if d in plan.scope)
        compared = tuple(c for c in resolution.compared if c.doc_id in plan.scope)
        return replace(resolution, prior_documents=priors, compared=compared)

    def admit_answer(self, plan: AnswerPlan, address: str | None) -> None:
        """Count the answer against the chat quota when it comes from ``address`` (agent mode
        also against ``quota.agent_per_day``); QuotaExceeded when refused."""
        limits = chat_limits(self.settings.quota, agent=plan.mode == "agent")
        admit(self.store, self.viewer, address, limits)

    def answer(
        self,
        plan: AnswerPlan,
        *,
        record: bool = True,
        cancelled: Callable[[], bool] | None = None,
    ) -> Iterator[Event]:
        """The events of ``plan``'s answer: sources, tokens, citations, then done or error (a
        failure is an ``error`` event, :func:`.redaction.failure_event`). With ``record`` the
        finished answer is stored (for ``truthbase verify``) before its ``done`` event;
        ``cancelled`` stops agent mode before its next model call."""
        try:
            embedder = self.embedder  # loaded first, so that its failure is the embedder's
        except Exception as exc:
            yield failure_event("embedder", exc)
            return
        try:
            judge = self.judge()
        except Exception as exc:
            yield failure_event("judge", exc)
            return
        resolution = self.resolve(plan) if plan.history else None
        events = answer_events(
            self.store,
            embedder,
            resolution.answer_question if resolution is not None else plan.question,
            self.settings,
            mode=plan.mode,
            k=plan.k,
            doc_ids=plan.scope,
            cancelled=cancelled,
            judge=judge,
            follow_up=resolution,
        )
        try:
            for event in events:
                if isinstance(event, DoneEvent):
                    if record:
                        record_answer(self.store, event.answer, self.viewer.user_id)
                    if resolution is not None:
                        event = replace(event, resolution=resolution)
                    if plan.keep:
                        event = replace(event, thread=self._keep(plan, event))
                yield event
        except Exception as exc:
            yield failure_event("answer", exc)

    def _keep(self, plan: AnswerPlan, done: DoneEvent) -> str | None:
        """Append the finished answer to the plan's saved thread (or a new one)."""
        return saved_threads.save_turn(
            self.store,
            self.viewer,
            plan.thread,
            plan.question,
            done.answer.to_json(),
            answer_id=done.answer.id,
            resolution=done.resolution.to_json() if done.resolution is not None else None,
        )

    def ask(
        self,
        question: str,
        *,
        mode: str | None = None,
        doc: str | None = None,
        documents: Sequence[str] = (),
        collection: str | None = None,
        k: int | None = None,
        record: bool = True,
        history: Sequence[Turn] = (),
    ) -> Iterator[Event]:
        """The events of one answer, as the server streams them: a ``SourcesEvent`` first, then
        ``TokenEvent``s, then a ``CitationsEvent``, then a ``DoneEvent`` (its ``answer`` is the
        whole answer) or an ``ErrorEvent``. ``mode``: ``auto`` (None), ``extractive``, ``llm``
        or ``agent``; ``doc``, ``documents`` and ``collection`` keep the sources (and agent
        mode's book tools) to those documents (:meth:`scope`);
        ``k`` sources (default ``retrieval.k``). With ``record`` the answer is stored for
        ``truthbase verify``. ``history``: the earlier turns of the thread the question follows
        (the done event then says what was searched). Not counted against any quota (no network
        client)."""
        plan = self.plan_answer(
            question,
            mode=mode,
            doc=doc,
            documents=documents,
            collection=collection,
            k=k,
            history=history,
        )
        yield from self.answer(plan, record=record)

    def shown(self, event: Event) -> tuple[str, dict[str, Any]]:
        """An event's kind and data as this viewer is shown them (:mod:`.redaction`)."""
        return event.kind, shown_event(self.viewer, event.kind, event.to_json())

    # -- passages and claims ----------------------------------------------------------------

    def passage(self, doc: str, unit: int, start: int, end: int) -> Passage:
        """The span ``[start, end)`` of unit ``unit`` (0-based) of ``doc``: its text, page,
        rects and position tag. InvalidInput for a unit or span out of range."""
        return read_passage(self.store, self.document(doc), unit, start, end)

    def unit(self, doc_id: str, index: int, *, kind: DocumentKind | None = None) -> UnitSpan:
        """Unit ``index`` (0-based) of the visible document of the full id ``doc_id``, as a
        span over its whole text (:func:`.passages.read_unit`: Conflict for another ``kind``,
        NotFound for a missing unit), as the EPUB reader asks for a section."""
        info = self.visible(doc_id)
        unit = read_unit(self.store, info, index, kind)
        return UnitSpan(info, unit, 0, len(unit.text))

    def span(
        self, doc_id: str, index: int, start: int, end: int, *, kind: DocumentKind | None = None
    ) -> UnitSpan:
        """The span ``[start, end)`` of unit ``index`` of the visible document ``doc_id``, as the
        viewers read it (:func:`.passages.read_span`); InvalidInput when it is out of range."""
        return read_span(self.store, self.visible(doc_id), index, start, end, kind)

    def verify_claim(
        self,
        doc: str,
        quote: str,
        claim: str,
        *,
        page: int | None = None,
        unit: int | None = None,
        judge: str | None = None,
    ) -> ClaimVerdict:
        """Whether ``quote`` is on the page (``page``, 1-based, PDFs) or unit (``unit``,
        0-based) of ``doc`` and supports ``claim``: the verdict's ``state`` is ``supported``,
        ``quote_only`` or ``unverified``, with where the quote is and each failed check
        (:func:`truthbase.cite.verify.verify_claim`, as ``truthbase verify-claim``); ``judge``
        (off, auto, llm) overrides the setting ``support.judge`` for this check."""
        if (page is None) == (unit is None):
            raise InvalidInput("give exactly one of page (PDF, 1-based) and unit (0-based)")
        require_text(quote, "quote", max_chars=MAX_QUOTE_CHARS)
        require_text(claim, "claim", max_chars=MAX_QUOTE_CHARS)
        info = self.document(doc)
        if page is not None:
            if info.kind == "epub":
                raise InvalidInput("an EPUB has sections, not pages: give unit (0-based)")
            if not 1 <= page <= info.unit_count:
                raise InvalidInput(
                    f"page {page} is out of range: document {info.id[:12]} has pages "
                    f"1..{info.unit_count}"
                )
            unit = page - 1
        assert unit is not None
        return _verify_claim(
            self.store, info.id, unit, quote, claim, self.embedder, judge=self.judge(judge)
        )

    # -- the document lifecycle -------------------------------------------------------------

    def upload(
        self, files: Sequence[ReceivedFile], *, visibility: str | None = None
    ) -> UploadResult:
        """Received files as ingest jobs of the viewer's, within ``library``'s upload limits
        (:mod:`.uploads`): the jobs queued and the limit that stopped the rest, if one did.
        ``visibility``: private, shared or None (private for users); InvalidInput for any other
        (nothing is queued). Every received file is placed or removed when this returns."""
        try:
            chosen = parse_visibility(visibility)
        except InvalidInput:
            remove_received(files)
            raise
        library = self.settings.library
        return queue_uploads(
            self.store,
            self.viewer,
            files,
            data_dir=data_folder(self.settings),
            visibility=chosen,
            limits=UploadLimits(
                files_per_day=library.files_per_day, bytes_per_user=library.bytes_per_user
            ),
            max_attempts=library.max_attempts,
        )

    def change_document(
        self,
        doc_id: str,
        *,
        title: str | None = None,
        visibility: Literal["private", "shared"] | None = None,
    ) -> None:
        """Rename a document and/or change its visibility (its owner or an admin)."""
        lifecycle.change_document(
            self.store, self.viewer, doc_id, title=title, visibility=visibility
        )

    def delete_document(self, doc_id: str) -> lifecycle.Deletion:
        """Delete a document, or let go of the viewer's hold on it, or leave it to its first
        holder (:func:`.lifecycle.delete_document`)."""
        data_dir = data_folder(self.settings)
        return lifecycle.delete_document(self.store, self.viewer, doc_id, data_dir)

    def reingest_document(self, doc_id: str) -> Job:
        """A job that ingests the document again from its stored file."""
        attempts = self.settings.library.max_attempts
        return lifecycle.reingest_document(self.store, self.viewer, doc_id, attempts)

    def jobs(self) -> list[Job]:
        """The viewer's ingest jobs (everyone's for those who see everything), newest first."""
        return lifecycle.visible_jobs(self.store, self.viewer)

    # -- collections (:mod:`.collections`) ----------------------------------------------------

    def collections(self) -> list[CollectionRecord]:
        """The viewer's collections by name, each with the members they may still see."""
        visible = frozenset(d.id for d in self.documents())
        return user_collections.list_collections(self.store, self.viewer, visible)

    def create_collection(self, name: str, documents: Sequence[str] = ()) -> CollectionRecord:
        """A new collection of the viewer's holding ``documents`` (ids or unique prefixes of
        documents they may see: NotFound otherwise)."""
        return user_collections.create_collection(
            self.store, self.viewer, name, self.document_ids(documents)
        )

    def rename_collection(self, name: str, new_name: str) -> None:
        """Rename one of the viewer's collections."""
        user_collections.rename_collection(self.store, self.viewer, name, new_name)

    def change_collection(
        self, name: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> None:
        """Add documents the viewer may see to one of their collections, and take some out (a
        member is taken out by its full id even when the viewer may no longer see it)."""
        held = user_collections.collection_members(self.store, self.viewer, name)
        added = self.document_ids(add)
        removed = [d for d in remove if d in held]
        removed += self.document_ids([d for d in remove if d not in held])
        user_collections.change_collection(self.store, self.viewer, name, add=added, remove=removed)

    def delete_collection(self, name: str) -> None:
        """Delete one of the viewer's collections (the documents stay)."""
        user_collections.delete_collection(self.store, self.viewer, name)

    # -- accounts and API tokens (:mod:`.accounts`) -------------------------------------------

    def add_user(self, name: str, password: str, *, admin: bool = False) -> UserRecord:
        """A new user (admins): the name checked, the password hashed with Argon2id."""
        return accounts.add_user(self.store, self.viewer, name, password, admin=admin)

    def users(self) -> list[UserRecord]:
        """Every user, by name (admins)."""
        return accounts.users(self.store, self.viewer)

    def usage(self) -> list[UserUsage]:
        """Each user's counted chats now and what they hold (admins)."""
        return accounts.usage(self.store, self.viewer)

    def remove_user(
        self, name: str, *, transfer_to: str | None = None, delete_documents: bool = False
    ) -> Removal:
        """Remove user ``name`` (admins); their private documents go to admin ``transfer_to``
        or (``delete_documents``) are deleted; refused without either when there are any."""
        return accounts.remove_user(
            self.store,
            self.viewer,
            name,
            transfer_to=transfer_to,
            delete_documents=delete_documents,
            data_dir=data_folder(self.settings),
        )

    def set_password(self, name: str, password: str) -> None:
        """A new password for ``name`` (its user or an admin); their sessions end."""
        accounts.set_password(self.store, self.viewer, name, password)

    def create_token(self, user: str, name: str | None = None) -> NewToken:
        """A new API token acting as ``user`` (one's own, or an admin's for anyone)."""
        return accounts.create_token(self.store, self.viewer, user, name)

    def tokens(self, user: str | None = None) -> list[ApiTokenRecord]:
        """The API tokens the viewer may see (never their secrets), ``user``'s when given."""
        return accounts.tokens(self.store, self.viewer, user)

    def revoke_token(self, token_id: str) -> None:
        """Revoke an API token (its user's or an admin's act)."""
        accounts.revoke_token(self.store, self.viewer, token_id)
