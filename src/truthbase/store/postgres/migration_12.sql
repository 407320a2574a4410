-- Version 12: sessions, API tokens and quota counters name their user by id, as documents,
-- holders and jobs do since 11 (a user added later under a removed user's name is given none
-- of theirs). Rows whose user is gone are dropped: the foreign key had removed such sessions and
-- tokens already, and a quota counter of nobody counts nothing. As SQLite's version 13.
ALTER TABLE truthbase.sessions ADD COLUMN user_id text;
UPDATE truthbase.sessions s SET user_id = u.id FROM truthbase.users u WHERE u.name = s.user_name;
DELETE FROM truthbase.sessions WHERE user_id IS NULL;
ALTER TABLE truthbase.sessions DROP COLUMN user_name;  -- with its index and foreign key
ALTER TABLE truthbase.sessions
    ALTER COLUMN user_id SET NOT NULL,
    ADD FOREIGN KEY (user_id) REFERENCES truthbase.users(id) ON DELETE CASCADE;
CREATE INDEX sessions_by_user_id ON truthbase.sessions (user_id);

ALTER TABLE truthbase.api_tokens ADD COLUMN user_id text;
UPDATE truthbase.api_tokens t SET user_id = u.id FROM truthbase.users u WHERE u.name = t.user_name;
DELETE FROM truthbase.api_tokens WHERE user_id IS NULL;
ALTER TABLE truthbase.api_tokens DROP COLUMN user_name;
ALTER TABLE truthbase.api_tokens
    ALTER COLUMN user_id SET NOT NULL,
    ADD FOREIGN KEY (user_id) REFERENCES truthbase.users(id) ON DELETE CASCADE;
CREATE INDEX api_tokens_by_user_id ON truthbase.api_tokens (user_id);

-- A signed-in user's counters ('user:NAME', after a use's prefix such as 'search:') are kept
-- under 'user:ID'.
DELETE FROM truthbase.quota_counters q
    WHERE strpos(q.key, 'user:') > 0 AND NOT EXISTS (
        SELECT 1 FROM truthbase.users u WHERE u.name = substr(q.key, strpos(q.key, 'user:') + 5));
UPDATE truthbase.quota_counters q
    SET key = substr(q.key, 1, strpos(q.key, 'user:') + 4) || u.id
    FROM truthbase.users u
    WHERE strpos(q.key, 'user:') > 0 AND u.name = substr(q.key, strpos(q.key, 'user:') + 5);
