"""Who asks, and the records of accounts and of what users keep (the ground floor).

``Viewer`` is who asks: every read path takes one, and :mod:`.access` says what each may see.
The account records (users, login sessions, API tokens) are what the store keeps of them; the
feedback and collection records are what a user keeps beside their answers. Apart from
:mod:`.records` (what the stages pass each other about documents) because no stage reads these
for a document's sake: the doors, the application and the store do. It imports nothing of
truthbase.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Viewer:
    """Who asks: a signed-in user (``user``, their name, with ``user_id``, their stable id, and
    ``admin``), or, with ``user`` None, the operator at the command line or the single local
    user of a server without accounts. :mod:`truthbase.access` says what each may see (by id:
    a name may be given again to a new user); every read path takes one."""

    user: str | None = None
    admin: bool = False
    user_id: str | None = None

    @property
    def local(self) -> bool:
        """The operator or the anonymous local user (no account)."""
        return self.user is None


#: The command line's viewer, and the local user's of a loopback server without accounts.
OPERATOR = Viewer()


#: How a listing names a user id that no user has any more (removed; ids are never reused).
REMOVED_USER = "(removed user)"


@dataclass(frozen=True, slots=True, kw_only=True)
class UserRecord:
    """An account: ``password_hash`` is Argon2id's encoded string (never the password);
    ``id`` is random and never reused, so what names the user by it (documents they own or
    hold, their jobs) is never a later user's of the same name."""

    name: str
    password_hash: str
    admin: bool = False
    created_at: str = ""
    id: str = field(default_factory=lambda: secrets.token_hex(16))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRecord:
    """A server-side login session: the cookie carries the session id, the store keeps only its
    sha256 (``id_hash``); ``user_id`` is its user's :attr:`UserRecord.id` (a later user of the
    same name holds none of it); times are Unix seconds."""

    id_hash: str
    user_id: str
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiTokenRecord:
    """An API token for scripts (``Authorization: Bearer``): ``id`` is its public handle (shown
    in lists, used to revoke), ``secret_hash`` the sha256 of the whole token, shown once;
    ``user_id`` is the :attr:`UserRecord.id` it acts as."""

    id: str
    secret_hash: str
    user_id: str
    name: str | None = None
    created_at: str = ""
    revoked_at: str | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


# -- feedback on answers ---------------------------------------------------------------------

#: What a user may say of an answer (``up``, ``down``: on the answer as a whole) or of one of
#: its citations (``wrong_passage``: the cited passage does not support the claim;
#: ``passage_missing``: the passage that does is not among the citations).
FeedbackKind = Literal["up", "down", "wrong_passage", "passage_missing"]
FEEDBACK_KINDS: tuple[FeedbackKind, ...] = ("up", "down", "wrong_passage", "passage_missing")
#: The kinds one report replaces among: a user's later word of a group on the same answer and
#: citation replaces the earlier (a thumbs-down after a thumbs-up is a change of mind).
FEEDBACK_GROUPS: tuple[tuple[FeedbackKind, ...], ...] = (
    ("up", "down"),
    ("wrong_passage", "passage_missing"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewFeedback:
    """A report as a user gives it: ``citation`` 0 for the answer as a whole, else its [n]."""

    answer_id: int
    citation: int
    kind: FeedbackKind
    comment: str
    user_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedbackRecord:
    """A stored report, with the question it was given on and its user's name (None: the
    operator or the local user; :data:`REMOVED_USER` never shows: a removed user's reports go
    with them)."""

    id: int
    answer_id: int
    citation: int
    kind: FeedbackKind
    comment: str
    user_id: str | None
    user: str | None
    question: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """As the doors show it: the user by name, never by id."""
        return {
            "id": self.id,
            "answer_id": self.answer_id,
            "citation": self.citation,
            "kind": self.kind,
            "comment": self.comment,
            "user": self.user,
            "question": self.question,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectionRecord:
    """A named collection of documents a user keeps, to limit questions to
    (:func:`truthbase.access.scope_of`): ``user_id`` is its owner's :attr:`UserRecord.id` (None:
    the operator's and the local user's), ``documents`` the ids it holds, sorted (one the viewer
    may no longer see stays listed here and drops out of a scope)."""

    name: str
    user_id: str | None
    documents: tuple[str, ...] = ()
    created_at: str = ""
