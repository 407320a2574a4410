-- TruthBase PostgreSQL functions: the search arms, their fusion (hybrid_search) and the quota
-- check (try_admit). All CREATE OR REPLACE: postgres.py re-applies this file whenever its
-- sha256 differs from the one recorded in truthbase.meta.

-- OR over the terms, each term a phrase of its words (a one-word term is its lexeme). Stop words
-- and punctuation drop out; nothing in a term is parsed as an operator, so no input raises.
-- NULL when no lexeme remains.
CREATE OR REPLACE FUNCTION truthbase.terms_tsquery(terms text[]) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    result tsquery;
    term text;
    phrase tsquery;
    n integer := 0;
BEGIN
    FOREACH term IN ARRAY coalesce(terms, '{}'::text[]) LOOP
        EXIT WHEN n >= 64;
        CONTINUE WHEN term IS NULL;
        phrase := phraseto_tsquery('english'::regconfig, truthbase.fts_prepare(term));
        CONTINUE WHEN numnode(phrase) = 0;
        result := CASE WHEN result IS NULL THEN phrase ELSE result || phrase END;
        n := n + 1;
    END LOOP;
    RETURN result;
END
$$;

-- The whitespace-separated words of a query (each becomes a phrase of its parts: "GV.OC-03").
CREATE OR REPLACE FUNCTION truthbase.query_terms(query_text text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN regexp_split_to_array(btrim(coalesce(query_text, '')), '\s+');

-- The full-text arm: chunks matching any term (a word or a phrase), ranked by BM25 as SQLite
-- FTS5's bm25() computes it (k1 = 1.2, b = 0.75; idf = ln((N - df + 0.5) / (df + 0.5)), at
-- least 1e-6; the frequency of a term is title_weight * its title hits + its text hits; the
-- length is the row's tokens over the average), so both backends rank alike. ts_rank_cd has no
-- IDF and ranked far worse on the golden set (MRR 0.38 against 0.63). title_weight 0 searches
-- the text alone. The GIN index finds the candidates; only they are scored.
CREATE OR REPLACE FUNCTION truthbase.fts_arm(terms text[], title_weight float8, n integer)
RETURNS TABLE (chunk_id bigint, rank integer, score float8)
LANGUAGE sql STABLE AS $$
    WITH
    raw AS (
        SELECT o.i, u.lexeme, p::integer AS p
        FROM unnest((coalesce(terms, '{}'::text[]))[1:64]) WITH ORDINALITY o(term, i),
             unnest(to_tsvector('english'::regconfig, truthbase.fts_prepare(o.term)))
                 u(lexeme, positions, weights),
             unnest(u.positions) p
        WHERE o.term IS NOT NULL
    ),
    t AS (
        SELECT r.i,
               array_agg(r.lexeme ORDER BY r.p) AS lex,
               array_agg(r.p - m.p0 ORDER BY r.p) AS offs,
               phraseto_tsquery('english'::regconfig, truthbase.fts_prepare(terms[r.i])) AS q
        FROM raw r JOIN (SELECT i, min(p) AS p0 FROM raw GROUP BY i) m ON m.i = r.i
        GROUP BY r.i
    ),
    stats AS (
        SELECT count(*)::float8 AS n, greatest(coalesce(avg(ntok), 1), 1)::float8 AS avgdl
        FROM truthbase.chunks
    ),
    idf AS (
        SELECT t.i, t.lex, t.offs,
               greatest(ln((stats.n - d.df + 0.5) / (d.df + 0.5)), 1e-6) AS idf
        FROM t, stats, LATERAL (
            SELECT count(*)::float8 AS df FROM truthbase.chunks c
            WHERE c.tsv @@ t.q AND (title_weight > 0 OR ts_filter(c.tsv, '{d}') @@ t.q)
        ) d
    ),
    cand AS MATERIALIZED (
        SELECT c.id, c.tsv, c.ntok FROM truthbase.chunks c
        WHERE c.tsv @@ truthbase.terms_tsquery(terms)
    ),
    -- Every position (and weight) of a query lexeme in a candidate, unnested once.
    pos AS MATERIALIZED (
        SELECT c.id, x.lexeme, y.p::integer AS p, y.wt
        FROM cand c,
             unnest(c.tsv) x(lexeme, positions, weights),
             unnest(x.positions, x.weights) y(p, wt)
        WHERE x.lexeme IN (SELECT unnest(idf.lex) FROM idf)
    ),
    -- A term's hits: positions of its first lexeme followed by the others at their offsets.
    hits AS (
        SELECT f.id, idf.i, idf.idf,
               sum(CASE WHEN f.wt = 'A' THEN greatest(title_weight, 0) ELSE 1 END) AS f
        FROM idf JOIN pos f ON f.lexeme = idf.lex[1]
        WHERE cardinality(idf.lex) = 1
           OR NOT EXISTS (
                SELECT 1 FROM generate_subscripts(idf.lex, 1) k
                WHERE k > 1 AND NOT EXISTS (
                    SELECT 1 FROM pos o
                    WHERE o.id = f.id AND o.lexeme = idf.lex[k]
                      AND o.p = f.p + idf.offs[k] AND o.wt = f.wt
                )
           )
        GROUP BY f.id, idf.i, idf.idf
    ),
    scored AS (
        SELECT h.id,
               sum(h.idf * (h.f * 2.2) / (h.f + 1.2 * (0.25 + 0.75 * c.ntok / stats.avgdl)))
                   AS score
        FROM hits h JOIN cand c ON c.id = h.id, stats
        GROUP BY h.id
        HAVING sum(h.f) > 0
    )
    SELECT s.id, (row_number() OVER (ORDER BY s.score DESC, s.id))::integer, s.score
    FROM scored s
    ORDER BY s.score DESC, s.id
    LIMIT greatest(n, 0)
$$;

-- The dense arm: cosine (inner product of L2-normalized vectors); a chunk scores the best of its
-- own vector and its windows' (max-sim). Exact by default; use_index reads the HNSW indexes
-- (approximate: each table's nearest 4n rows, then max-sim over those).
CREATE OR REPLACE FUNCTION truthbase.dense_arm(qv vector, n integer, use_index boolean)
RETURNS TABLE (chunk_id bigint, rank integer, score float8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF qv IS NULL OR n <= 0 THEN
        RETURN;
    END IF;
    IF use_index THEN
        PERFORM set_config('hnsw.ef_search', greatest(4 * n, 40)::text, true);
        RETURN QUERY
        SELECT g.cid, (row_number() OVER (ORDER BY g.s DESC, g.cid))::integer, g.s
        FROM (
            SELECT a.cid, max(a.s) AS s
            FROM (
                (SELECT c.id AS cid, -(c.vector <#> qv)::float8 AS s
                 FROM truthbase.chunks c ORDER BY c.vector <#> qv LIMIT 4 * n)
                UNION ALL
                (SELECT w.chunk_id, -(w.vector <#> qv)::float8
                 FROM truthbase.windows w ORDER BY w.vector <#> qv LIMIT 4 * n)
            ) a
            GROUP BY a.cid
            ORDER BY s DESC, a.cid
            LIMIT n
        ) g;
    ELSE
        RETURN QUERY
        SELECT g.cid, (row_number() OVER (ORDER BY g.s DESC, g.cid))::integer, g.s
        FROM (
            SELECT a.cid, max(a.s) AS s
            FROM (
                SELECT c.id AS cid, -(c.vector <#> qv)::float8 AS s FROM truthbase.chunks c
                UNION ALL
                SELECT w.chunk_id, -(w.vector <#> qv)::float8 FROM truthbase.windows w
            ) a
            GROUP BY a.cid
            ORDER BY s DESC, a.cid
            LIMIT n
        ) g;
    END IF;
END
$$;

-- Hybrid search in one round trip: both arms and weighted reciprocal rank fusion,
-- score = sum over arms of weight / (rrf_k + rank). weights = {fts, dense}; an arm of weight 0
-- is left out entirely. Ties go to the better best rank, then to first appearance (the full-text
-- list top to bottom, then the dense list), as truthbase.retrieve.fusion.weighted_rrf orders.
-- terms: the full-text terms (phrases) when the caller built them; NULL: the query's words.
CREATE OR REPLACE FUNCTION truthbase.hybrid_search(
    query_text text,
    query_embedding vector,
    k integer,
    weights float8[],
    rrf_k float8,
    candidates integer DEFAULT 50,
    title_weight float8 DEFAULT 1.0,
    terms text[] DEFAULT NULL,
    use_index boolean DEFAULT false
)
RETURNS TABLE (
    chunk_id bigint,
    score float8,
    fts_rank integer,
    dense_rank integer,
    fts_score float8,
    dense_score float8
)
LANGUAGE sql STABLE AS $$
    WITH
    fts AS (
        SELECT f.chunk_id, f.rank, f.score
        FROM truthbase.fts_arm(
            coalesce(terms, truthbase.query_terms(query_text)),
            title_weight,
            CASE WHEN coalesce(weights[1], 0) > 0 THEN candidates ELSE 0 END
        ) f
    ),
    dense AS (
        SELECT d.chunk_id, d.rank, d.score
        FROM truthbase.dense_arm(
            query_embedding,
            CASE WHEN coalesce(weights[2], 0) > 0 THEN candidates ELSE 0 END,
            use_index
        ) d
    ),
    n_fts AS (SELECT count(*) AS n FROM fts),
    both_arms AS (
        SELECT coalesce(f.chunk_id, d.chunk_id) AS chunk_id,
               f.rank AS fts_rank, d.rank AS dense_rank,
               f.score AS fts_score, d.score AS dense_score
        FROM fts f FULL OUTER JOIN dense d ON d.chunk_id = f.chunk_id
    )
    SELECT b.chunk_id,
           coalesce(weights[1] / (rrf_k + b.fts_rank), 0)
             + coalesce(weights[2] / (rrf_k + b.dense_rank), 0) AS score,
           b.fts_rank, b.dense_rank, b.fts_score, b.dense_score
    FROM both_arms b, n_fts
    ORDER BY score DESC,
             least(coalesce(b.fts_rank, 2147483647), coalesce(b.dense_rank, 2147483647)),
             coalesce(b.fts_rank, n_fts.n + b.dense_rank)
    LIMIT greatest(k, 0)
$$;

-- Admission of one request, all or nothing: per client per minute, per client per day and a
-- global daily budget (NULL: unlimited). The counter rows are locked in one fixed order, so
-- concurrent calls serialize without deadlocks; a refused call changes nothing.
-- retry_after_s: seconds until every refusing window has rolled over.
CREATE OR REPLACE FUNCTION truthbase.try_admit(
    client_key text,
    now_s float8,
    per_minute integer,
    per_day integer,
    global_per_day integer
)
RETURNS TABLE (admitted boolean, retry_after_s float8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    minute_bucket bigint := floor(now_s / 60);
    day_bucket bigint := floor(now_s / 86400);
    used_minute integer := 0;
    used_day integer := 0;
    used_global integer := 0;
    wait float8 := 0;
BEGIN
    -- Create the rows this call may update (no-op when they exist), then lock them in the same
    -- order as the insert's: (scope, key, bucket), i.e. day, global, minute.
    INSERT INTO truthbase.quota_counters AS q (scope, key, bucket, count)
    SELECT s.scope, s.key, s.bucket, 0
    FROM (VALUES ('global', '', day_bucket, global_per_day),
                 ('day', client_key, day_bucket, per_day),
                 ('minute', client_key, minute_bucket, per_minute)) AS s(scope, key, bucket, lim)
    WHERE s.lim IS NOT NULL
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING;

    IF per_day IS NOT NULL THEN
        SELECT q.count INTO used_day FROM truthbase.quota_counters q
        WHERE q.scope = 'day' AND q.key = client_key AND q.bucket = day_bucket FOR UPDATE;
    END IF;
    IF global_per_day IS NOT NULL THEN
        SELECT q.count INTO used_global FROM truthbase.quota_counters q
        WHERE q.scope = 'global' AND q.key = '' AND q.bucket = day_bucket FOR UPDATE;
    END IF;
    IF per_minute IS NOT NULL THEN
        SELECT q.count INTO used_minute FROM truthbase.quota_counters q
        WHERE q.scope = 'minute' AND q.key = client_key AND q.bucket = minute_bucket FOR UPDATE;
    END IF;

    IF global_per_day IS NOT NULL AND used_global >= global_per_day THEN
        wait := greatest(wait, (day_bucket + 1) * 86400 - now_s);
    END IF;
    IF per_day IS NOT NULL AND used_day >= per_day THEN
        wait := greatest(wait, (day_bucket + 1) * 86400 - now_s);
    END IF;
    IF per_minute IS NOT NULL AND used_minute >= per_minute THEN
        wait := greatest(wait, (minute_bucket + 1) * 60 - now_s);
    END IF;
    IF wait > 0 THEN
        RETURN QUERY SELECT false, wait;
        RETURN;
    END IF;

    UPDATE truthbase.quota_counters q SET count = q.count + 1
    WHERE (q.scope = 'global' AND q.key = '' AND q.bucket = day_bucket
           AND global_per_day IS NOT NULL)
       OR (q.scope = 'day' AND q.key = client_key AND q.bucket = day_bucket
           AND per_day IS NOT NULL)
       OR (q.scope = 'minute' AND q.key = client_key AND q.bucket = minute_bucket
           AND per_minute IS NOT NULL);
    -- Old buckets are of no further use.
    -- Only rows of windows this call holds the lock of, so deletes never contend.
    DELETE FROM truthbase.quota_counters q
    WHERE (per_minute IS NOT NULL AND q.scope = 'minute' AND q.key = client_key
           AND q.bucket < minute_bucket)
       OR (per_day IS NOT NULL AND q.scope = 'day' AND q.key = client_key
           AND q.bucket < day_bucket)
       OR (global_per_day IS NOT NULL AND q.scope = 'global' AND q.key = ''
           AND q.bucket < day_bucket);
    RETURN QUERY SELECT true, 0.0::float8;
END
$$;
