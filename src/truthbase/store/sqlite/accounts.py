"""Accounts in SQLite: the ``users``, ``sessions`` and ``api_tokens`` tables (schema 7)."""

from __future__ import annotations

import sqlite3

from ...errors import InvalidInput
from ...records import ApiTokenRecord, SessionRecord, UserRecord
from .connection import Database

__all__ = [
    "add_session",
    "add_token",
    "add_user",
    "remove_session",
    "remove_user",
    "revoke_token",
    "session",
    "set_password",
    "token_by_hash",
    "tokens",
    "user",
    "user_count",
    "users",
]

_USER = "SELECT name, password_hash, admin, created_at FROM users"
_TOKEN = "SELECT id, secret_hash, user_name, name, created_at, revoked_at FROM api_tokens"


def _user(row: tuple[object, ...]) -> UserRecord:
    return UserRecord(
        name=str(row[0]), password_hash=str(row[1]), admin=bool(row[2]), created_at=str(row[3])
    )


def _token(row: tuple[object, ...]) -> ApiTokenRecord:
    return ApiTokenRecord(
        id=str(row[0]),
        secret_hash=str(row[1]),
        user=str(row[2]),
        name=None if row[3] is None else str(row[3]),
        created_at=str(row[4]),
        revoked_at=None if row[5] is None else str(row[5]),
    )


def add_user(db: Database, record: UserRecord) -> None:
    try:
        with db.transaction() as conn:
            conn.execute(
                "INSERT INTO users(name, password_hash, admin, created_at) VALUES (?, ?, ?, ?)",
                (record.name, record.password_hash, int(record.admin), record.created_at),
            )
    except sqlite3.IntegrityError as exc:
        raise InvalidInput(f"a user named {record.name!r} exists already") from exc


def user(db: Database, name: str) -> UserRecord | None:
    with db.lock:
        row = db.conn.execute(f"{_USER} WHERE name = ?", (name,)).fetchone()
    return _user(row) if row else None


def users(db: Database) -> list[UserRecord]:
    with db.lock:
        rows = db.conn.execute(f"{_USER} ORDER BY name").fetchall()
    return [_user(row) for row in rows]


def user_count(db: Database) -> int:
    with db.lock:
        return int(db.conn.execute("SELECT count(*) FROM users").fetchone()[0])


def remove_user(db: Database, name: str) -> bool:
    with db.transaction() as conn:  # sessions and tokens go with it (ON DELETE CASCADE)
        return conn.execute("DELETE FROM users WHERE name = ?", (name,)).rowcount > 0


def set_password(db: Database, name: str, password_hash: str) -> bool:
    with db.transaction() as conn:
        changed = conn.execute(
            "UPDATE users SET password_hash = ? WHERE name = ?", (password_hash, name)
        ).rowcount
        # a new password ends every login made with the old one
        conn.execute("DELETE FROM sessions WHERE user_name = ?", (name,))
    return changed > 0


def add_session(db: Database, record: SessionRecord) -> None:
    with db.transaction() as conn:
        conn.execute("DELETE FROM sessions WHERE expires_at < ?", (record.created_at,))
        conn.execute(
            "INSERT INTO sessions(id_hash, user_name, created_at, expires_at) VALUES (?, ?, ?, ?)",
            (record.id_hash, record.user, record.created_at, record.expires_at),
        )


def session(db: Database, id_hash: str) -> SessionRecord | None:
    with db.lock:
        row = db.conn.execute(
            "SELECT id_hash, user_name, created_at, expires_at FROM sessions WHERE id_hash = ?",
            (id_hash,),
        ).fetchone()
    if row is None:
        return None
    return SessionRecord(
        id_hash=str(row[0]), user=str(row[1]), created_at=float(row[2]), expires_at=float(row[3])
    )


def remove_session(db: Database, id_hash: str) -> None:
    with db.transaction() as conn:
        conn.execute("DELETE FROM sessions WHERE id_hash = ?", (id_hash,))


def add_token(db: Database, record: ApiTokenRecord) -> None:
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO api_tokens(id, secret_hash, user_name, name, created_at, revoked_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.secret_hash,
                record.user,
                record.name,
                record.created_at,
                record.revoked_at,
            ),
        )


def token_by_hash(db: Database, secret_hash: str) -> ApiTokenRecord | None:
    with db.lock:
        row = db.conn.execute(f"{_TOKEN} WHERE secret_hash = ?", (secret_hash,)).fetchone()
    return _token(row) if row else None


def tokens(db: Database, user_name: str | None = None) -> list[ApiTokenRecord]:
    with db.lock:
        if user_name is None:
            rows = db.conn.execute(f"{_TOKEN} ORDER BY created_at, id").fetchall()
        else:
            rows = db.conn.execute(
                f"{_TOKEN} WHERE user_name = ? ORDER BY created_at, id", (user_name,)
            ).fetchall()
    return [_token(row) for row in rows]


def revoke_token(db: Database, token_id: str, revoked_at: str) -> bool:
    with db.transaction() as conn:
        return (
            conn.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (revoked_at, token_id),
            ).rowcount
            > 0
        )
