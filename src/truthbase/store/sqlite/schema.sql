-- TruthBase SQLite schema. Bump SCHEMA_VERSION in sqlite/connection.py with every change.
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS documents (
    id                TEXT PRIMARY KEY,          -- sha256 of the file's bytes
    title             TEXT NOT NULL,
    path              TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('pdf', 'epub')),
    unit_count        INTEGER NOT NULL,
    ingested_at       TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    report            TEXT NOT NULL,             -- JSON: what extraction repaired
    toc               TEXT,                      -- JSON: EPUB table of contents
    metadata          TEXT,                      -- JSON: EPUB dc:* metadata
    owner             TEXT,                      -- user id; NULL: the operator (CLI)
    visibility        TEXT NOT NULL DEFAULT 'shared'
                      CHECK (visibility IN ('private', 'shared')),
    language          TEXT,                      -- ISO 639-1 (truthbase.text.language); NULL: unknown
    title_terms       TEXT NOT NULL DEFAULT ''   -- the title's full-text terms (fulltext.py)
);
CREATE INDEX IF NOT EXISTS documents_by_owner ON documents (owner);

CREATE TABLE IF NOT EXISTS units (
    doc_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,                   -- 0-based page (or spine item)
    label    TEXT,                               -- printed page label
    href     TEXT,                               -- EPUB spine item
    text     TEXT NOT NULL,                      -- canonical text: every offset points here
    boxes    BLOB,                               -- glyph boxes packed (store/boxes.py); NULL: none
    geometry TEXT,                               -- JSON: mediabox, cropbox, rotation
    html     TEXT,                               -- EPUB: the sanitized XHTML the reader shows
    dom_map  TEXT,                               -- EPUB: canonical offsets to DOM positions
    language TEXT,                               -- ISO 639-1 (truthbase.text.language); NULL: unknown
    text_source TEXT,                            -- pdf | ocr | epub (NULL before version 7)
    ocr      TEXT,                               -- JSON: engine, languages, dpi, confidence
    PRIMARY KEY (doc_id, idx)
);

CREATE TABLE IF NOT EXISTS chunks (
    id      INTEGER PRIMARY KEY,
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    unit    INTEGER NOT NULL,
    start   INTEGER NOT NULL,
    "end"   INTEGER NOT NULL,
    -- no text: a chunk's text is its unit's text[start:end], read from there (schema 22)
    rects   TEXT NOT NULL,                       -- JSON list of [x0, y0, x1, y1]
    vector  BLOB NOT NULL,                       -- scale (float32) + int8 (dim,): codec.vector_code
    terms   TEXT NOT NULL DEFAULT '',            -- full-text terms, space-separated (fulltext.py)
    kind    TEXT NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'table')),
    context TEXT NOT NULL DEFAULT '',            -- not in the span: a table chunk's column names
    context_terms TEXT NOT NULL DEFAULT '',      -- the context's full-text terms
    section TEXT NOT NULL DEFAULT '',            -- not in the span: the section path (sections.py)
    section_terms TEXT NOT NULL DEFAULT ''       -- the section path's full-text terms
);
CREATE INDEX IF NOT EXISTS chunks_by_unit ON chunks (doc_id, unit);

-- Sentence windows inside a chunk, each with its own vector; the dense arm scores a chunk by the
-- best of its own vector and its windows' (max-sim). Offsets are unit offsets, like the chunk's.
CREATE TABLE IF NOT EXISTS windows (
    id       INTEGER PRIMARY KEY,
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    start    INTEGER NOT NULL,
    "end"    INTEGER NOT NULL,
    vector   BLOB NOT NULL                       -- as chunks.vector (int8 codes and a scale)
);
CREATE INDEX IF NOT EXISTS windows_by_chunk ON windows (chunk_id);

-- Each chunk's token vectors (the embedder's per-token hidden states) reduced to their signs, for
-- late interaction (truthbase.retrieve.late): n_tokens rows of ceil(dim / 8) bytes, as
-- np.packbits(matrix > 0, axis=1) packs them. Documents ingested before version 6 have none.
CREATE TABLE IF NOT EXISTS chunk_tokens (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    signs    BLOB NOT NULL
);

-- What the full-text index reads: each chunk's terms with its document's title terms, so that a
-- question that names the document ("Self-RAG's critic") can match it (weighted at query time by
-- bm25()), and a table chunk's column names (its context) and the chunk's section path with the
-- title, outside its text. The terms are made in Python, stemmed per language
-- (truthbase.text.fulltext), the same for PostgreSQL;
-- the 'ascii' tokenizer only splits them at their spaces (every non-ASCII character is a token
-- character to it, and the terms hold no ASCII punctuation or capitals).
CREATE VIEW IF NOT EXISTS chunks_fts_content AS
    SELECT c.id AS id,
           trim(d.title_terms || ' ' || c.context_terms || ' ' || c.section_terms) AS title,
           c.terms AS text
    FROM chunks c JOIN documents d ON d.id = c.doc_id;

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title,
    text,
    content = 'chunks_fts_content',
    content_rowid = 'id',
    tokenize = 'ascii'
);

-- Answers as they were shown (`truthbase ask`, POST /api/chat), for `truthbase verify`: the
-- answer object's JSON with its citations (source n, doc_id, unit, start, end, quote, verified).
CREATE TABLE IF NOT EXISTS answers (
    id         INTEGER PRIMARY KEY,
    question   TEXT NOT NULL,
    answer     TEXT NOT NULL,                    -- JSON: the answer object
    created_at TEXT NOT NULL,                    -- ISO 8601, UTC
    -- who asked (version 19, for feedback's access): NULL for the operator, the local user,
    -- an answer from before 19, or one whose user was removed
    asked_by   TEXT REFERENCES users(id) ON DELETE SET NULL
);

-- The segment index (truthbase.segments; queries in sqlite/segments.py): a document's segments
-- per summarizer id ("extractive-v1", "llm:MODEL"), each with its tagged summary and the
-- summary's vector. `builder` names the cutting rules; stale rows are rebuilt on use.
CREATE TABLE IF NOT EXISTS segments (
    doc_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    summarizer TEXT NOT NULL,                    -- cache key
    idx        INTEGER NOT NULL,                 -- 0-based, reading order
    title      TEXT NOT NULL,
    parts      TEXT NOT NULL,                    -- JSON [[unit, start, end], ...]
    summary    TEXT NOT NULL,                    -- with position tags [f{unit}-{start}-{end}]
    written_by TEXT NOT NULL,                    -- the summarizer that wrote this summary
    builder    TEXT NOT NULL,
    embedder   TEXT,
    vector     BLOB,                             -- float32 (dim,): the summary's embedding
    PRIMARY KEY (doc_id, summarizer, idx)
);

-- Accounts (truthbase.access says who sees what): users with their Argon2id hashes, server-side
-- login sessions (the cookie carries the session id; only its sha256 is kept) and API tokens
-- (the sha256 of the whole token; tokens are 256 random bits, so a fast hash is enough).
CREATE TABLE IF NOT EXISTS users (
    name          TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,                 -- Argon2id encoded string
    admin         INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    id            TEXT NOT NULL UNIQUE           -- stable: documents, holders and jobs name it
);

-- Sessions and tokens name their user by id (version 13; the name before), so that a user
-- added later under a removed user's name is never given the removed user's.
CREATE TABLE IF NOT EXISTS sessions (
    id_hash    TEXT PRIMARY KEY,                 -- sha256 hex of the cookie's session id
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at REAL NOT NULL,                    -- Unix seconds
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_user_id ON sessions (user_id);

CREATE TABLE IF NOT EXISTS api_tokens (
    id          TEXT PRIMARY KEY,                -- public handle, shown in lists
    secret_hash TEXT NOT NULL UNIQUE,            -- sha256 hex of the whole token
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX IF NOT EXISTS api_tokens_by_user_id ON api_tokens (user_id);
-- Collections (version 17; store/sql/collections.py): named lists of document ids a user keeps,
-- to limit questions to. user_id NULL: the operator's (and the local user's). A member is an
-- id, not a foreign key: a deleted document leaves it, and the scope rule drops it.
CREATE TABLE IF NOT EXISTS collections (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT REFERENCES users(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS collections_by_user_name
    ON collections (coalesce(user_id, ''), name);
CREATE INDEX IF NOT EXISTS collections_by_user_id ON collections (user_id);
CREATE TABLE IF NOT EXISTS collection_documents (
    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    doc_id        TEXT NOT NULL,
    PRIMARY KEY (collection_id, doc_id)
);
-- Ingest jobs (truthbase.jobs; queries in sqlite/jobs.py): one row per file to ingest, its
-- state, progress, lease (a worker's claim, renewed by heartbeats) and how it ended. Times are
-- Unix seconds. doc_id has no foreign key: a job outlives the document it made.
CREATE TABLE IF NOT EXISTS jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('ingest', 'reingest')),
    owner        TEXT,                           -- the uploader's user id; NULL: the local user
    filename     TEXT NOT NULL,                  -- as uploaded, for display only
    file         TEXT NOT NULL,                  -- uploads/ab/<sha>.<kind> (data folder) or a
                                                 -- re-ingested document's stored path
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    visibility   TEXT,                           -- asked for at upload (NULL: the default)
    state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    stage        TEXT,
    pages_done   INTEGER NOT NULL DEFAULT 0,
    pages_total  INTEGER NOT NULL DEFAULT 0,
    doc_id       TEXT,
    reason       TEXT,                           -- failed: encrypted, corrupt, unsupported, ...
    message      TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    worker       TEXT,
    lease_until  REAL,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (owner, created_at);

-- The prompt-injection screen's verdict on each document (truthbase.ingest_screen), written with
-- the document.
CREATE TABLE IF NOT EXISTS document_screens (
    doc_id  TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    flagged INTEGER NOT NULL,
    result  TEXT NOT NULL                        -- JSON: ScreenResult.to_json()
);

-- Users who uploaded a document that was in the index already (one document per content): they
-- hold it as its owner does, without anyone telling them it was there.
CREATE TABLE IF NOT EXISTS document_holders (
    doc_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    holder   TEXT NOT NULL,                      -- a user id
    added_at TEXT NOT NULL,
    PRIMARY KEY (doc_id, holder)
);

-- Feedback on shown answers (version 19; truthbase.app.feedback): a thumbs up or down on an
-- answer (citation 0) or "wrong passage" / "passage missing" on its citation [n], with an
-- optional comment. One user's later report of a group (up/down; wrong/missing) on the same
-- answer and citation replaces the earlier. user_id NULL: the operator or the local user; a
-- removed user's reports go with them, as their sessions do.
CREATE TABLE IF NOT EXISTS feedback (
    id         INTEGER PRIMARY KEY,
    answer_id  INTEGER NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
    citation   INTEGER NOT NULL DEFAULT 0 CHECK (citation >= 0),
    kind       TEXT NOT NULL
               CHECK (kind IN ('up', 'down', 'wrong_passage', 'passage_missing')),
    comment    TEXT NOT NULL DEFAULT '',
    user_id    TEXT REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL                     -- ISO 8601, UTC
);
CREATE INDEX IF NOT EXISTS feedback_by_answer ON feedback (answer_id, citation);
CREATE INDEX IF NOT EXISTS feedback_by_time ON feedback (created_at);
-- Saved threads (version 16; truthbase.app.threads): a user's conversations, each turn the
-- question as asked, what it was searched as, and the answer as it was shown (its JSON, with
-- citations and spans; the answer log keeps its own copy for `truthbase verify`). owner NULL: the
-- local user or the operator. A removed user's threads go with them.
CREATE TABLE IF NOT EXISTS threads (
    id         TEXT PRIMARY KEY,                 -- random hex
    owner      TEXT REFERENCES users(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    created_at TEXT NOT NULL,                    -- ISO 8601, UTC
    updated_at TEXT NOT NULL                     -- the last turn's time (lists sort by it)
);
CREATE INDEX IF NOT EXISTS threads_by_owner ON threads (owner, updated_at);

CREATE TABLE IF NOT EXISTS thread_turns (
    thread_id    TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,               -- 0-based, in the order asked
    question     TEXT NOT NULL,
    answer_text  TEXT NOT NULL,                  -- what a thread search reads
    answer       TEXT NOT NULL,                  -- JSON: the answer object as it was shown
    answer_id    INTEGER,                        -- its row in answers (no key: the log is apart)
    resolution   TEXT,                           -- JSON: how a follow-up was searched, or NULL
    created_at   TEXT NOT NULL,
    PRIMARY KEY (thread_id, idx)
);

-- Read-only links to saved threads (version 20; truthbase.app.shares): a token (random, from
-- secrets.token_urlsafe) opens its thread for a signed-in user who may see every document it
-- cites. A revoked share keeps its row (revoked_at set) and never opens again; a thread's
-- shares go with it.
CREATE TABLE IF NOT EXISTS thread_shares (
    token      TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,                    -- ISO 8601, UTC
    revoked_at TEXT                              -- NULL while the link opens
);
CREATE INDEX IF NOT EXISTS thread_shares_by_thread ON thread_shares (thread_id);
