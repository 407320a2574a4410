-- TruthBase PostgreSQL migration 5 -> 6 (only adds): who owns a document and who else sees it
-- (truthbase.access), the accounts (users with their Argon2id hashes, server-side login sessions
-- and API tokens, both kept as the sha256 of the secret the client holds), and 64-bit quota
-- counters (the per-user bytes stored count bytes). Existing documents are shared, owned by the
-- operator (owner NULL).
ALTER TABLE truthbase.documents
    ADD COLUMN owner text,
    ADD COLUMN visibility text NOT NULL DEFAULT 'shared'
        CHECK (visibility IN ('private', 'shared'));
CREATE INDEX documents_by_owner ON truthbase.documents (owner);

CREATE TABLE truthbase.users (
    name          text PRIMARY KEY,
    password_hash text NOT NULL,                 -- Argon2id encoded string
    admin         boolean NOT NULL DEFAULT false,
    created_at    text NOT NULL
);

CREATE TABLE truthbase.sessions (
    id_hash    text PRIMARY KEY,                 -- sha256 hex of the cookie's session id
    user_name  text NOT NULL REFERENCES truthbase.users(name) ON DELETE CASCADE ON UPDATE CASCADE,
    created_at float8 NOT NULL,                  -- Unix seconds
    expires_at float8 NOT NULL
);
CREATE INDEX sessions_by_user ON truthbase.sessions (user_name);

CREATE TABLE truthbase.api_tokens (
    id          text PRIMARY KEY,                -- public handle, shown in lists
    secret_hash text NOT NULL UNIQUE,            -- sha256 hex of the whole token
    user_name   text NOT NULL REFERENCES truthbase.users(name) ON DELETE CASCADE ON UPDATE CASCADE,
    name        text,
    created_at  text NOT NULL,
    revoked_at  text
);
CREATE INDEX api_tokens_by_user ON truthbase.api_tokens (user_name);

ALTER TABLE truthbase.quota_counters ALTER COLUMN count TYPE bigint;
