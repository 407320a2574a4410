-- Version 15: saved threads (truthbase.app.threads), as SQLite's version 16: a user's
-- conversations, each turn the question as asked, what it was searched as, and the answer as
-- it was shown (JSON kept as text, so that it reads back as written). owner NULL: the local user
-- or the operator; a removed user's threads go with them.
CREATE TABLE IF NOT EXISTS truthbase.threads (
    id         text PRIMARY KEY,
    owner      text REFERENCES truthbase.users(id) ON DELETE CASCADE,
    title      text NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS threads_by_owner ON truthbase.threads (owner, updated_at);

CREATE TABLE IF NOT EXISTS truthbase.thread_turns (
    thread_id   text NOT NULL REFERENCES truthbase.threads(id) ON DELETE CASCADE,
    idx         integer NOT NULL,
    question    text NOT NULL,
    answer_text text NOT NULL,
    answer      text NOT NULL,
    answer_id   bigint,
    resolution  text,
    created_at  text NOT NULL,
    PRIMARY KEY (thread_id, idx)
);
