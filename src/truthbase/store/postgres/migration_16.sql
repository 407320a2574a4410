-- Version 16: collections, named lists of document ids a user keeps to limit questions to
-- (store/sql/collections.py; SQLite's version 17). user_id NULL: the operator's. A member is an
-- id, not a foreign key: a deleted document leaves it, and the scope rule drops it.
CREATE TABLE IF NOT EXISTS truthbase.collections (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text REFERENCES truthbase.users(id) ON DELETE CASCADE,
    name       text NOT NULL,
    created_at text NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS collections_by_user_name
    ON truthbase.collections ((coalesce(user_id, '')), name);
CREATE INDEX IF NOT EXISTS collections_by_user_id ON truthbase.collections (user_id);
CREATE TABLE IF NOT EXISTS truthbase.collection_documents (
    collection_id bigint NOT NULL REFERENCES truthbase.collections(id) ON DELETE CASCADE,
    doc_id        text NOT NULL,
    PRIMARY KEY (collection_id, doc_id)
);
