"""Accounts in PostgreSQL: ``truthbase.users``, ``truthbase.sessions`` and
``truthbase.api_tokens`` (migration 6)."""

from __future__ import annotations

import psycopg

from ...errors import InvalidInput
from ...records import ApiTokenRecord, SessionRecord, UserRecord
from .pool import Pool

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

_USER = "SELECT name, password_hash, admin, created_at FROM truthbase.users"
_TOKEN = "SELECT id, secret_hash, user_name, name, created_at, revoked_at FROM truthbase.api_tokens"


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


def add_user(pool: Pool, record: UserRecord) -> None:
    try:
        with pool.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO truthbase.users(name, password_hash, admin, created_at) "
                "VALUES (%s, %s, %s, %s)",
                (record.name, record.password_hash, record.admin, record.created_at),
            )
    except psycopg.errors.UniqueViolation as exc:
        raise InvalidInput(f"a user named {record.name!r} exists already") from exc


def user(pool: Pool, name: str) -> UserRecord | None:
    with pool.connection() as conn:
        row = conn.execute(f"{_USER} WHERE name = %s", (name,)).fetchone()
    return _user(row) if row else None


def users(pool: Pool) -> list[UserRecord]:
    with pool.connection() as conn:
        rows = conn.execute(f"{_USER} ORDER BY name").fetchall()
    return [_user(row) for row in rows]


def user_count(pool: Pool) -> int:
    with pool.connection() as conn:
        return int(conn.execute("SELECT count(*) FROM truthbase.users").fetchone()[0])


def remove_user(pool: Pool, name: str) -> bool:
    # sessions and tokens go with it (ON DELETE CASCADE)
    with pool.connection() as conn, conn.transaction():
        cursor = conn.execute("DELETE FROM truthbase.users WHERE name = %s", (name,))
        return bool(cursor.rowcount > 0)


def set_password(pool: Pool, name: str, password_hash: str) -> bool:
    with pool.connection() as conn, conn.transaction():
        changed = conn.execute(
            "UPDATE truthbase.users SET password_hash = %s WHERE name = %s", (password_hash, name)
        ).rowcount
        # a new password ends every login made with the old one
        conn.execute("DELETE FROM truthbase.sessions WHERE user_name = %s", (name,))
    return bool(changed > 0)


def add_session(pool: Pool, record: SessionRecord) -> None:
    with pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM truthbase.sessions WHERE expires_at < %s", (record.created_at,))
        conn.execute(
            "INSERT INTO truthbase.sessions(id_hash, user_name, created_at, expires_at) "
            "VALUES (%s, %s, %s, %s)",
            (record.id_hash, record.user, record.created_at, record.expires_at),
        )


def session(pool: Pool, id_hash: str) -> SessionRecord | None:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT id_hash, user_name, created_at, expires_at FROM truthbase.sessions "
            "WHERE id_hash = %s",
            (id_hash,),
        ).fetchone()
    if row is None:
        return None
    return SessionRecord(
        id_hash=str(row[0]), user=str(row[1]), created_at=float(row[2]), expires_at=float(row[3])
    )


def remove_session(pool: Pool, id_hash: str) -> None:
    with pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM truthbase.sessions WHERE id_hash = %s", (id_hash,))


def add_token(pool: Pool, record: ApiTokenRecord) -> None:
    with pool.connection() as conn, conn.transaction():
        conn.execute(
            "INSERT INTO truthbase.api_tokens(id, secret_hash, user_name, name, created_at, "
            "revoked_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (
                record.id,
                record.secret_hash,
                record.user,
                record.name,
                record.created_at,
                record.revoked_at,
            ),
        )


def token_by_hash(pool: Pool, secret_hash: str) -> ApiTokenRecord | None:
    with pool.connection() as conn:
        row = conn.execute(f"{_TOKEN} WHERE secret_hash = %s", (secret_hash,)).fetchone()
    return _token(row) if row else None


def tokens(pool: Pool, user_name: str | None = None) -> list[ApiTokenRecord]:
    with pool.connection() as conn:
        if user_name is None:
            rows = conn.execute(f"{_TOKEN} ORDER BY created_at, id").fetchall()
        else:
            rows = conn.execute(
                f"{_TOKEN} WHERE user_name = %s ORDER BY created_at, id", (user_name,)
            ).fetchall()
    return [_token(row) for row in rows]


def revoke_token(pool: Pool, token_id: str, revoked_at: str) -> bool:
    with pool.connection() as conn, conn.transaction():
        cursor = conn.execute(
            "UPDATE truthbase.api_tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
            (revoked_at, token_id),
        )
        return bool(cursor.rowcount > 0)
