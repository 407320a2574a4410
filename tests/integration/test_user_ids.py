"""Users are named by a stable id wherever the index records them (a document's owner, its
holders, a job's owner, a session, an API token, a quota counter), on both backends: a user added
later under a removed user's name holds nothing of the removed user's; ``users remove`` says what
becomes of the private documents; listings show names, never ids; and an index made before the
ids (or before sessions, tokens and quotas used them) opens with its users mapped to them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.helpers.pg_server import Backend
from truthbase import accounts
from truthbase.access import may_manage, visible_ids
from truthbase.app.admission import admit
from truthbase.cli import cli
from truthbase.errors import InvalidInput
from truthbase.jobs import JobDraft, UploadLimits
from truthbase.model import ChunkDraft, ExtractedDocument, Unit, Visibility
from truthbase.people import REMOVED_USER, Viewer
from truthbase.quota import QuotaLimits, client_key_for
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.store import SQLiteStore, Store, StoreError
from truthbase.store.copy import copy_sqlite_index
from truthbase.store.postgres import PostgresStore

EMBEDDER = IndexEmbedder("m", 4)
#: The last commit before user ids (its schema names users by name), for the migration test: its
#: sources come from the repository's history (``git archive``), or $TRUTHBASE_OLD_SOURCES.
BEFORE_IDS = "6de7b5b8d77445dfc264e3c4eb971b0b2045bbf2"
#: The last commit whose sessions, API tokens and quota counters name users by name (SQLite
#: schema 12, PostgreSQL 11: documents, holders and jobs by id already).
BEFORE_SESSION_IDS = "cca212cfc7e3cd5bcc8e81484ba22eb0230fbea6"


def _add(store: Store, sha: str, owner: str | None, visibility: Visibility) -> str:
    text = f"document {sha[:4]} text"
    document = ExtractedDocument(
        sha256=sha,
        title=f"Doc {sha[:4]}",
        path=f"/{sha}.pdf",
        kind="pdf",
        units=[Unit(index=0, text=text, boxes=[None] * len(text))],
        extractor_version="t",
    )
    chunk = ChunkDraft(unit=0, start=0, end=len(text), text=text, rects=())
    vectors = np.eye(1, 4, dtype=np.float32)
    store.add_document(
        IndexedDocument(
            document=document,
            chunks=[chunk],
            vectors=vectors,
            embedder=EMBEDDER,
            owner=owner,
            visibility=visibility,
        )
    )
    return sha


def _viewer(store: Store, name: str) -> Viewer:
    """Who a signed-in ``name`` is, as the server finds them (a session)."""
    now = time.time()
    user = store.user(name)
    assert user is not None
    viewer = accounts.session_viewer(store, accounts.create_session(store, user, now, 60.0), now)
    assert viewer is not None
    return viewer


def _recorded(viewer: Viewer) -> str:
    """What the doors record as this user's ownership: their id (the main branch before ids
    recorded the name, which is what made the removed user's documents a new user's)."""
    return str(getattr(viewer, "user_id", None) or viewer.user)


def test_a_new_user_under_a_removed_users_name_sees_nothing_of_theirs(backend: Backend) -> None:
    store = backend.open()
    try:
        accounts.add_user(store, "ann", "password-of-ann")
        accounts.add_user(store, "bob", "password-of-bob")
        ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
        private = _add(store, "a" * 64, _recorded(bob), "private")
        shared = _add(store, "b" * 64, _recorded(bob), "shared")
        held = _add(store, "c" * 64, _recorded(ann), "private")
        store.add_holder(held, _recorded(bob))
        assert visible_ids(bob, store.list_documents()) == {private, shared, held}

        assert store.remove_user("bob")  # the documents stay, as they were
        accounts.add_user(store, "bob", "another-password")
        newcomer = _viewer(store, "bob")
        documents = store.list_documents()
        assert visible_ids(newcomer, documents) == {shared}  # shared with everyone, no more
        assert not any(may_manage(newcomer, d) for d in documents)
        assert visible_ids(ann, documents) == {shared, held}
    finally:
        store.close()


def test_a_new_user_under_a_removed_users_name_gets_no_session_token_or_quota_of_theirs(
    backend: Backend,
) -> None:
    store = backend.open()
    try:
        now = time.time()
        old = accounts.add_user(store, "bob", "password-of-bob")
        session = accounts.create_session(store, old, now, 600.0)
        token = accounts.create_token(store, "bob", "ci")
        limits = QuotaLimits(per_day=5)
        for _ in range(3):
            admit(store, _viewer(store, "bob"), "10.0.0.1", limits)
        (used,) = accounts.usage(store, now)
        assert (used.quota.day, used.tokens) == (3, 1)
        assert store.quota_usage(client_key_for(old.id, ""), now).day == 3  # counted by id

        assert store.remove_user("bob")
        new = accounts.add_user(store, "bob", "another-password")
        assert accounts.session_viewer(store, session, now) is None
        assert accounts.token_viewer(store, token.secret) is None
        assert store.tokens(new.id) == [] and store.tokens() == []
        (fresh,) = accounts.usage(store, now)
        assert (fresh.quota.day, fresh.tokens) == (0, 0)  # a fresh quota
        admit(store, _viewer(store, "bob"), "10.0.0.1", limits)
        assert store.quota_usage(client_key_for(new.id, ""), now).day == 1
    finally:
        store.close()


def test_job_listings_show_the_owners_name_and_a_removed_user_as_such(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    store = SQLiteStore(db)
    try:
        ann = accounts.add_user(store, "ann", "password-of-ann")
        bob = accounts.add_user(store, "bob", "password-of-bob")
        for owner, name in ((ann.id, "a.pdf"), (bob.id, "b.pdf"), (None, "c.pdf")):
            draft = JobDraft(owner=owner, filename=name, file=name, sha256="d" * 64, size=1)
            queued = store.add_job(draft, time.time(), UploadLimits())
            assert queued.owner_name == (None if owner is None else store.user_by_id(owner).name)
        store.remove_user("bob")
        accounts.add_user(store, "bob", "another-password")  # not the owner of bob's old job
        shown = {j.filename: j.to_json()["owner"] for j in store.jobs()}
        assert shown == {"a.pdf": "ann", "b.pdf": REMOVED_USER, "c.pdf": None}
        assert [j.owner for j in store.jobs() if j.filename == "b.pdf"] == [bob.id]
    finally:
        store.close()
    listed = CliRunner().invoke(cli, ["--db", str(db), "jobs", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert {j["filename"]: j["owner"] for j in json.loads(listed.output)} == shown
    table = CliRunner().invoke(cli, ["--db", str(db), "jobs", "list"])
    assert table.exit_code == 0, table.output
    assert "│ ann " in table.output and "(removed" in table.output  # a narrow table wraps it
    assert ann.id not in table.output and bob.id not in table.output


def test_a_copy_into_postgres_keeps_the_accounts_and_who_owns_and_holds_what(
    tmp_path: Path, pg_url: str
) -> None:
    now = time.time()
    source = SQLiteStore(tmp_path / "source.sqlite")
    try:
        ann = accounts.add_user(source, "ann", "password-of-ann")
        bob = accounts.add_user(source, "bob", "password-of-bob", admin=True)
        held = _add(source, "a" * 64, bob.id, "private")
        source.add_holder(held, ann.id)
        token = accounts.create_token(source, "ann", "ci")
        revoked = accounts.create_token(source, "bob")
        accounts.revoke_token(source, revoked.record.id)
        session = accounts.create_session(source, ann, now, 600.0)
    finally:
        source.close()
    target = PostgresStore(pg_url)
    try:
        assert copy_sqlite_index(tmp_path / "source.sqlite", target) == 1
        assert target.users() == [ann, bob]  # the same ids and password hashes
        assert accounts.authenticate(target, "bob", "password-of-bob") == bob
        by_token = accounts.token_viewer(target, token.secret)
        assert by_token is not None and by_token.user_id == ann.id
        assert accounts.token_viewer(target, revoked.secret) is None  # revoked stays revoked
        assert accounts.session_viewer(target, session, now) is None  # sessions are not copied
        (document,) = target.list_documents()
        assert document.owner_name == "bob" and document.holders == (ann.id,)
        assert visible_ids(by_token, [document]) == {held}
        assert copy_sqlite_index(tmp_path / "source.sqlite", target) == 0  # again: nothing new
        assert len(target.tokens()) == 2 and len(target.users()) == 2
    finally:
        target.close()
    other = SQLiteStore(tmp_path / "other.sqlite")
    try:
        accounts.add_user(other, "bob", "password-of-another-bob")
    finally:
        other.close()
    target = PostgresStore(pg_url)
    try:  # the target's bob is another person: refused before anything is written
        with pytest.raises(StoreError, match="another user named 'bob'"):
            copy_sqlite_index(tmp_path / "other.sqlite", target)
        assert target.users() == [ann, bob]
    finally:
        target.close()


def _two_users_and_bobs_documents(store: Store) -> tuple[Viewer, Viewer, Viewer, list[str]]:
    accounts.add_user(store, "root", "password-of-root", admin=True)
    accounts.add_user(store, "ann", "password-of-ann")
    accounts.add_user(store, "bob", "password-of-bob")
    root, ann, bob = (_viewer(store, n) for n in ("root", "ann", "bob"))
    docs = [
        _add(store, "a" * 64, bob.user_id, "private"),
        _add(store, "b" * 64, bob.user_id, "shared"),
        _add(store, "c" * 64, bob.user_id, "private"),  # ann holds it too
    ]
    store.add_holder(docs[2], str(ann.user_id))
    return root, ann, bob, docs


def test_removing_a_user_with_private_documents_needs_a_decision(backend: Backend) -> None:
    store = backend.open()
    try:
        _, _, bob, _ = _two_users_and_bobs_documents(store)
        with pytest.raises(InvalidInput, match="owns 2 private documents"):
            accounts.remove_user(store, "bob")
        with pytest.raises(InvalidInput, match="admin"):
            accounts.remove_user(store, "bob", transfer_to="ann")  # not an admin
        assert store.user("bob") is not None  # refused: nothing was removed
        assert {d.owner for d in store.list_documents()} == {bob.user_id}
    finally:
        store.close()


def test_transfer_gives_every_document_to_the_admin(backend: Backend) -> None:
    store = backend.open()
    try:
        root, ann, _, docs = _two_users_and_bobs_documents(store)
        removal = accounts.remove_user(store, "bob", transfer_to="root")
        assert removal.transferred == 3 and store.user("bob") is None
        documents = store.list_documents()
        assert {d.owner for d in documents} == {root.user_id}
        assert {d.owner_name for d in documents} == {"root"}
        assert all(may_manage(root, d) for d in documents)
        assert visible_ids(ann, documents) == {docs[1], docs[2]}  # her hold stays
    finally:
        store.close()


def test_delete_removes_private_documents_and_a_holder_inherits(backend: Backend) -> None:
    store = backend.open()
    try:
        _, ann, bob, docs = _two_users_and_bobs_documents(store)
        removal = accounts.remove_user(store, "bob", delete_documents=True)
        assert removal.deleted == (f"/{docs[0]}.pdf",) and removal.inherited == 1
        assert removal.kept == 1
        documents = {d.id: d for d in store.list_documents()}
        assert set(documents) == {docs[1], docs[2]}
        assert documents[docs[2]].owner == ann.user_id and documents[docs[2]].holders == ()
        assert documents[docs[1]].owner == bob.user_id  # shared: stays, admins manage it
        assert documents[docs[1]].owner_name is None
    finally:
        store.close()


def test_the_cli_refuses_to_remove_without_a_decision(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    store = SQLiteStore(db)
    try:
        _, _, _, docs = _two_users_and_bobs_documents(store)
    finally:
        store.close()
    runner = CliRunner()
    refused = runner.invoke(cli, ["--db", str(db), "users", "remove", "bob"])
    assert refused.exit_code == 2
    assert "--transfer-to ADMIN or --delete-documents" in refused.output
    done = runner.invoke(cli, ["--db", str(db), "users", "remove", "bob", "--delete-documents"])
    assert done.exit_code == 0, done.output
    assert "1 private documents deleted" in done.output
    store = SQLiteStore(db)
    try:
        assert store.user("bob") is None and not store.has_document(docs[0])
    finally:
        store.close()


_OLD_INDEX = """
import sys
import numpy as np
from truthbase import accounts
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.library import JobDraft, UploadLimits  # its name before jobs.py

kind, location = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    from pathlib import Path
    from truthbase.store import SQLiteStore
    store = SQLiteStore(Path(location))
else:
    from truthbase.store.postgres import PostgresStore
    store = PostgresStore(location)
for name in ("ann", "bob", "carl"):
    accounts.add_user(store, name, "password-of-" + name)
for sha, owner in (("a" * 64, "bob"), ("b" * 64, "ann"), ("c" * 64, "carl")):
    text = "document " + sha[:4]
    store.add_document(IndexedDocument(
        document=ExtractedDocument(
            sha256=sha, title="Doc " + sha[:4], path="/" + sha + ".pdf", kind="pdf",
            units=[Unit(index=0, text=text, boxes=[None] * len(text))], extractor_version="t",
        ),
        chunks=[ChunkDraft(unit=0, start=0, end=len(text), text=text, rects=())],
        vectors=np.eye(1, 4, dtype=np.float32),
        embedder=IndexEmbedder("m", 4),
        owner=owner,
        visibility="private",
    ))
store.add_holder("b" * 64, "bob")
store.add_job(JobDraft(owner="bob", filename="x.pdf", file="x", sha256="d" * 64, size=1), 0.0,
              UploadLimits())
store.remove_user("carl")  # before ids: carl's document keeps the name
store.close()
"""


def _sources_of(commit: str, target: Path) -> Path:
    """The ``src`` folder of ``commit``, from this repository's history."""
    repo = Path(__file__).resolve().parents[2]
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "src"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {commit[:7]} is not in this clone's history: {archive.stderr!r}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    return target / "src"


@pytest.fixture(scope="module")
def old_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``src`` folder of the commit before user ids (or $TRUTHBASE_OLD_SOURCES)."""
    given = os.environ.get("TRUTHBASE_OLD_SOURCES")
    if given:
        return Path(given)
    return _sources_of(BEFORE_IDS, tmp_path_factory.mktemp("before-ids"))


@pytest.fixture(scope="module", params=(BEFORE_IDS, BEFORE_SESSION_IDS), ids=("ids", "sessions"))
def sources_before_session_ids(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The ``src`` folder of a commit whose sessions, tokens and quota counters name users by
    name: before user ids at all, and just before these used them."""
    return _sources_of(request.param, tmp_path_factory.mktemp("before-session-ids"))


def _run_old(sources: Path, script: str, backend: Backend) -> str:
    old = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), backend.kind, backend.location],
        env={**os.environ, "PYTHONPATH": str(sources)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert old.returncode == 0, old.stderr
    return old.stdout


def test_an_index_made_before_user_ids_maps_its_owners_to_them(
    backend: Backend, old_sources: Path
) -> None:
    _run_old(old_sources, _OLD_INDEX, backend)
    store = backend.open()
    try:
        users = {u.name: u for u in store.users()}
        assert set(users) == {"ann", "bob"} and all(len(u.id) == 32 for u in users.values())
        bob = _viewer(store, "bob")
        assert bob.user_id == users["bob"].id
        documents = {d.id: d for d in store.list_documents()}
        assert documents["a" * 64].owner == users["bob"].id
        assert documents["a" * 64].owner_name == "bob"
        assert documents["b" * 64].holders == (users["bob"].id,)
        assert visible_ids(bob, documents.values()) == {"a" * 64, "b" * 64}
        assert [j.owner for j in store.jobs()] == [users["bob"].id]
        # carl was removed before the ids: a new carl holds nothing of the old one's
        assert documents["c" * 64].owner == "removed:carl"
        accounts.add_user(store, "carl", "password-of-carl")
        assert visible_ids(_viewer(store, "carl"), documents.values()) == frozenset()
    finally:
        store.close()


_OLD_ACCOUNTS = """
import json
import sys
import time
from truthbase import accounts

kind, location = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    from pathlib import Path
    from truthbase.store import SQLiteStore
    store = SQLiteStore(Path(location))
else:
    from truthbase.store.postgres import PostgresStore
    store = PostgresStore(location)
from truthbase.quota import QuotaLimits
now = time.time()
secrets = {}
for name in ("ann", "bob", "carl"):
    accounts.add_user(store, name, "password-of-" + name)
for name in ("bob", "carl"):
    secrets[name] = {
        "session": accounts.create_session(store, name, now, 3600.0),
        "token": accounts.create_token(store, name, "ci").secret,
    }
for key in ("user:bob", "user:bob", "search:user:bob", "user:carl", "ip:10.0.0.9"):
    assert store.try_admit(key, now, QuotaLimits(per_day=10)).admitted
store.remove_user("carl")  # his sessions and tokens go (the foreign key); his counters stay
store.close()
print(json.dumps(secrets))
"""


def test_sessions_tokens_and_quotas_made_by_name_open_keyed_by_id(
    backend: Backend, sources_before_session_ids: Path
) -> None:
    secrets = json.loads(_run_old(sources_before_session_ids, _OLD_ACCOUNTS, backend))
    store = backend.open()
    try:
        now = time.time()
        bob = store.user("bob")
        signed_in = accounts.session_viewer(store, secrets["bob"]["session"], now)
        assert signed_in is not None and signed_in.user_id == bob.id
        by_token = accounts.token_viewer(store, secrets["bob"]["token"])
        assert by_token is not None and by_token.user_id == bob.id
        assert [t.user_id for t in store.tokens()] == [bob.id]
        assert store.quota_usage(client_key_for(bob.id, ""), now).day == 2
        assert store.quota_usage("search:" + client_key_for(bob.id, ""), now).day == 1
        assert store.quota_usage("ip:10.0.0.9", now).day == 1
        assert store.quota_usage("user:bob", now).day == 0  # no key names a user any more

        carl = accounts.add_user(store, "carl", "password-of-carl")
        assert accounts.session_viewer(store, secrets["carl"]["session"], now) is None
        assert accounts.token_viewer(store, secrets["carl"]["token"]) is None
        assert store.quota_usage(client_key_for(carl.id, ""), now).day == 0
        assert store.quota_usage("user:carl", now).day == 0

        # the new tables' foreign key holds: removing bob ends the session and the token
        assert store.remove_user("bob")
        assert accounts.session_viewer(store, secrets["bob"]["session"], now) is None
        assert accounts.token_viewer(store, secrets["bob"]["token"]) is None and not store.tokens()
    finally:
        store.close()
