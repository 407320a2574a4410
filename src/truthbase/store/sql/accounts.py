"""Accounts, written once for both backends: the ``users``, ``sessions`` and ``api_tokens``
tables. Removing a user removes their sessions and tokens (ON DELETE CASCADE). Documents, holders,
jobs, sessions and tokens name a user by their random id (:attr:`~truthbase.people.UserRecord.id`),
never by the name, which a later user may be given."""

from __future__ import annotations

from ...errors import InvalidInput
from ...people import ApiTokenRecord, SessionRecord, UserRecord
from .dialect import Dialect

__all__ = ["AccountRows"]

_USER = "SELECT name, password_hash, admin, created_at, id FROM users"
_TOKEN = "SELECT id, secret_hash, user_id, name, created_at, revoked_at FROM api_tokens"


def _user(row: tuple[object, ...]) -> UserRecord:
    return UserRecord(
        name=str(row[0]),
        password_hash=str(row[1]),
        admin=bool(row[2]),
        created_at=str(row[3]),
        id=str(row[4]),
    )


def _token(row: tuple[object, ...]) -> ApiTokenRecord:
    return ApiTokenRecord(
        id=str(row[0]),
        secret_hash=str(row[1]),
        user_id=str(row[2]),
        name=None if row[3] is None else str(row[3]),
        created_at=str(row[4]),
        revoked_at=None if row[5] is None else str(row[5]),
    )


class AccountRows:
    """:class:`~truthbase.store.base.Accounts` over :attr:`_sql`."""

    _sql: Dialect

    def add_user(self, user: UserRecord) -> None:
        try:
            with self._sql.write() as conn:
                conn.execute(
                    "INSERT INTO users(name, password_hash, admin, created_at, id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (user.name, user.password_hash, user.admin, user.created_at, user.id),
                )
        except self._sql.integrity_error as exc:
            raise InvalidInput(f"a user named {user.name!r} exists already") from exc

    def user(self, name: str) -> UserRecord | None:
        with self._sql.read() as conn:
            row = conn.execute(f"{_USER} WHERE name = ?", (name,)).fetchone()
        return _user(row) if row else None

    def user_by_id(self, user_id: str) -> UserRecord | None:
        with self._sql.read() as conn:
            row = conn.execute(f"{_USER} WHERE id = ?", (user_id,)).fetchone()
        return _user(row) if row else None

    def users(self) -> list[UserRecord]:
        with self._sql.read() as conn:
            rows = conn.execute(f"{_USER} ORDER BY name{self._sql.byte_order}").fetchall()
        return [_user(row) for row in rows]

    def user_count(self) -> int:
        with self._sql.read() as conn:
            return int(conn.execute("SELECT count(*) FROM users").fetchone()[0])

    def remove_user(self, name: str) -> bool:
        """The user, their sessions and tokens (ON DELETE CASCADE) and their holds on others'
        documents. What they own keeps their id, which no later user gets."""
        with self._sql.write() as conn:
            conn.execute(
                "DELETE FROM document_holders WHERE holder = (SELECT id FROM users WHERE name = ?)",
                (name,),
            )
            return conn.execute("DELETE FROM users WHERE name = ?", (name,)).rowcount > 0

    def set_password(self, name: str, password_hash: str) -> bool:
        with self._sql.write() as conn:
            changed = conn.execute(
                "UPDATE users SET password_hash = ? WHERE name = ?", (password_hash, name)
            ).rowcount
            conn.execute(
                "DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)",
                (name,),
            )
        return changed > 0

    def add_session(self, session: SessionRecord) -> None:
        with self._sql.write() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at < ?", (session.created_at,))
            conn.execute(
                "INSERT INTO sessions(id_hash, user_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (session.id_hash, session.user_id, session.created_at, session.expires_at),
            )

    def session(self, id_hash: str) -> SessionRecord | None:
        with self._sql.read() as conn:
            row = conn.execute(
                "SELECT id_hash, user_id, created_at, expires_at FROM sessions WHERE id_hash = ?",
                (id_hash,),
            ).fetchone()
        if row is None:
            return None
        return SessionRecord(
            id_hash=str(row[0]),
            user_id=str(row[1]),
            created_at=float(row[2]),
            expires_at=float(row[3]),
        )

    def remove_session(self, id_hash: str) -> None:
        with self._sql.write() as conn:
            conn.execute("DELETE FROM sessions WHERE id_hash = ?", (id_hash,))

    def add_token(self, token: ApiTokenRecord) -> None:
        with self._sql.write() as conn:
            conn.execute(
                "INSERT INTO api_tokens(id, secret_hash, user_id, name, created_at, "
                "revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    token.id,
                    token.secret_hash,
                    token.user_id,
                    token.name,
                    token.created_at,
                    token.revoked_at,
                ),
            )

    def token_by_hash(self, secret_hash: str) -> ApiTokenRecord | None:
        with self._sql.read() as conn:
            row = conn.execute(f"{_TOKEN} WHERE secret_hash = ?", (secret_hash,)).fetchone()
        return _token(row) if row else None

    def tokens(self, user_id: str | None = None) -> list[ApiTokenRecord]:
        """Every token (of the user with id ``user_id``), oldest first, revoked ones included."""
        with self._sql.read() as conn:
            if user_id is None:
                rows = conn.execute(f"{_TOKEN} ORDER BY created_at, id").fetchall()
            else:
                rows = conn.execute(
                    f"{_TOKEN} WHERE user_id = ? ORDER BY created_at, id", (user_id,)
                ).fetchall()
        return [_token(row) for row in rows]

    def revoke_token(self, token_id: str, revoked_at: str) -> bool:
        with self._sql.write() as conn:
            cursor = conn.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (revoked_at, token_id),
            )
            return cursor.rowcount > 0
