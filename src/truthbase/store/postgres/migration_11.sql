-- Version 11: users get a stable id, and documents, holders and jobs name their user by it (a
-- user added later under a removed user's name holds none of the removed user's documents). A
-- name with no user left becomes 'removed:NAME', which no user's id is. As SQLite's version 12.
ALTER TABLE truthbase.users ADD COLUMN id text;
UPDATE truthbase.users SET id = md5(random()::text || clock_timestamp()::text || name);
ALTER TABLE truthbase.users ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX users_by_id ON truthbase.users (id);
UPDATE truthbase.documents d
    SET owner = coalesce((SELECT u.id FROM truthbase.users u WHERE u.name = d.owner), 'removed:' || d.owner)
    WHERE d.owner IS NOT NULL;
UPDATE truthbase.jobs j
    SET owner = coalesce((SELECT u.id FROM truthbase.users u WHERE u.name = j.owner), 'removed:' || j.owner)
    WHERE j.owner IS NOT NULL;
UPDATE truthbase.document_holders h
    SET holder = coalesce((SELECT u.id FROM truthbase.users u WHERE u.name = h.holder), 'removed:' || h.holder);
