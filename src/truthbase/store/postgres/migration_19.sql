-- Version 19: read-only links to saved threads (truthbase.app.shares), as SQLite's version 20:
-- a token (random) opens its thread for a signed-in user who may see every document it cites.
-- A revoked share keeps its row (revoked_at set) and never opens again; a thread's shares go
-- with it.
CREATE TABLE IF NOT EXISTS truthbase.thread_shares (
    token      text PRIMARY KEY,
    thread_id  text NOT NULL REFERENCES truthbase.threads(id) ON DELETE CASCADE,
    created_at text NOT NULL,
    revoked_at text
);
CREATE INDEX IF NOT EXISTS thread_shares_by_thread ON truthbase.thread_shares (thread_id);
