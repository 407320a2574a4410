"""The use cases of what a user keeps of answers: saved threads (:mod:`.threads`) and their
read-only links (:mod:`.shares`), exports and their re-check (:mod:`.exports`) and feedback
(:mod:`.feedback`), as methods of the :class:`~truthbase.app.service.Service` (which inherits
them), each asking its rules module."""

from __future__ import annotations

from collections.abc import Sequence

from ..config import Settings
from ..errors import InvalidInput
from ..export import ReportCheck
from ..people import FeedbackRecord, Viewer
from ..store import Store
from ..turns import ThreadInfo
from . import exports, feedback, shares
from . import threads as saved_threads

__all__ = ["KeptAnswers"]


class KeptAnswers:
    """Saved threads, exports and feedback over :attr:`store`, as :attr:`viewer` may."""

    settings: Settings
    viewer: Viewer

    @property
    def store(self) -> Store:
        raise NotImplementedError  # the service's open store

    # -- saved threads (:mod:`.threads`) -----------------------------------------------------

    def threads(self, query: str | None = None) -> list[ThreadInfo]:
        """The viewer's saved threads, newest first; with ``query``, those whose questions or
        answers hold, for each of its words, a word that begins with it."""
        return saved_threads.threads(self.store, self.viewer, query)

    def thread(self, thread_id: str) -> saved_threads.OpenedThread:
        """The viewer's thread with every citation checked again against the index."""
        return saved_threads.open_thread(self.store, self.viewer, thread_id)

    def rename_thread(self, thread_id: str, title: str) -> ThreadInfo:
        """A new title for the viewer's thread (NotFound for anyone else's)."""
        return saved_threads.rename_thread(self.store, self.viewer, thread_id, title)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the viewer's thread (the answer log keeps its answers for ``verify``)."""
        saved_threads.delete_thread(self.store, self.viewer, thread_id)

    def thread_counts(self) -> list[saved_threads.ThreadCounts]:
        """Per user, how many threads and turns (admins only; never contents)."""
        return saved_threads.thread_counts(self.store, self.viewer)

    # -- their read-only links (:mod:`.shares`) ------------------------------------------------

    def share_thread(self, thread_id: str) -> shares.ThreadShare:
        """The open read-only link of the viewer's thread (made when it has none)."""
        return shares.share_thread(self.store, self.viewer, thread_id)

    def revoke_share(self, thread_id: str) -> None:
        """Close the links of the viewer's thread, for good."""
        shares.revoke_share(self.store, self.viewer, thread_id)

    def shared_thread(self, token: str) -> saved_threads.OpenedThread:
        """The thread a link opens, read-only, for a signed-in viewer who may see every
        document it shows (NotFound otherwise, as for an unknown link)."""
        return shares.open_shared(self.store, self.viewer, token)

    # -- exports (:mod:`.exports`) ------------------------------------------------------------

    def export_answers(
        self, answer_ids: Sequence[int], fmt: str, *, base_url: str | None = None
    ) -> exports.ExportFile:
        """Stored answers (one, or a thread's in order) as Markdown (``md``) or one HTML
        evidence report (``html``), each citation linking to the web app under ``base_url``
        (default: ``server.base_url``, else the server's host and port)."""
        server = self.settings.server
        base = base_url or server.base_url or f"http://{server.host}:{server.port}"
        return exports.export_answers(self.store, self.viewer, answer_ids, fmt, base)

    def export_thread(
        self, thread_id: str, fmt: str, *, base_url: str | None = None
    ) -> exports.ExportFile:
        """The viewer's saved thread (NotFound for anyone else's), its answers in order, as
        :meth:`export_answers` writes them; InvalidInput when no turn has a stored answer."""
        saved_threads.own_thread(self.store, self.viewer, thread_id)
        ids = [t.answer_id for t in self.store.thread_turns(thread_id) if t.answer_id is not None]
        if not ids:
            raise InvalidInput(f"thread {thread_id} has no stored answer to export")
        return self.export_answers(ids, fmt, base_url=base_url)

    def verify_report(self, report: str) -> ReportCheck:
        """What of an exported report (its HTML or Markdown text) no longer holds in this
        index (those who see every document; InvalidInput over
        :data:`~.exports.MAX_REPORT_BYTES` or for a file that is not a report)."""
        return exports.verify_report(self.store, self.viewer, report)

    # -- feedback (the rules: :mod:`.feedback`) ------------------------------------------------

    def give_feedback(
        self, answer_id: int, kind: str, *, citation: int = 0, comment: str = ""
    ) -> FeedbackRecord:
        """The viewer's report on an answer they may see."""
        return feedback.give_feedback(
            self.store, self.viewer, answer_id, kind, citation=citation, comment=comment
        )

    def own_feedback(self, answer_id: int) -> list[FeedbackRecord]:
        """The viewer's own reports on one answer (a reopened answer shows them as given)."""
        return feedback.own_feedback(self.store, self.viewer, answer_id)

    def feedback_reports(self, limit: int | None = feedback.LATEST) -> list[FeedbackRecord]:
        """The latest reports the viewer may list, newest first."""
        return feedback.list_feedback(self.store, self.viewer, limit)

    def feedback_golden(self) -> feedback.GoldenDraft:
        """Every reported question as a draft golden set (admins)."""
        return feedback.draft_golden(self.store, self.viewer)
