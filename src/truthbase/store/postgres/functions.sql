-- TruthBase PostgreSQL functions: the search arms (fts_arm, dense_arm; the product fuses them in
-- Python, truthbase.retrieve.hybrid.search) and the quota check (try_admit). All CREATE OR
-- REPLACE: postgres/schema.py re-applies this file whenever its sha256 differs from the one
-- recorded in truthbase.meta.

-- Signatures that changed (a new argument): drop the old ones so that no call is ambiguous.
DROP FUNCTION IF EXISTS truthbase.dense_arm(vector, integer, boolean);
-- Both arms gained the access filter (doc_ids text[]: the documents the caller may see).
DROP FUNCTION IF EXISTS truthbase.dense_arm(vector, integer, boolean, integer);
DROP FUNCTION IF EXISTS truthbase.fts_arm(text[], float8, integer);
DROP FUNCTION IF EXISTS truthbase.hybrid_search(
    text, vector, integer, float8[], float8, integer, float8, text[], boolean
);
-- Gone: the fusion of both arms in SQL (no caller ran it but the tests and the benchmark) and
-- the query splitting that only it used.
DROP FUNCTION IF EXISTS truthbase.hybrid_search(
    text, vector, integer, float8[], float8, integer, float8, text[], boolean, integer
);
DROP FUNCTION IF EXISTS truthbase.query_terms(text);

-- OR over the terms, each term a phrase of its tokens (a one-token term is its lexeme), tokenized
-- and stemmed as the chunks are (truthbase.fts_phrase, migration_4.sql: FTS5's tokenizer).
-- Punctuation drops out; nothing in a term is parsed as an operator, so no input raises. NULL
-- when no lexeme remains.
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
        phrase := truthbase.fts_phrase(term);
        CONTINUE WHEN phrase IS NULL OR numnode(phrase) = 0;
        result := CASE WHEN result IS NULL THEN phrase ELSE result || phrase END;
        n := n + 1;
    END LOOP;
    RETURN result;
END
$$;

-- How often a phrase of several lexemes occurs in a chunk: positions of its first lexeme followed
-- by the others at their offsets, with the same weight; a title (weight A) hit counts tw, a text
-- hit 1. (One-lexeme terms are counted by ts_rank_cd in fts_arm, in C.)
CREATE OR REPLACE FUNCTION truthbase.phrase_freq(tsv tsvector, term text, tw float8)
RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH
    raw AS (
        SELECT u.lexeme, p::integer AS p
        FROM unnest(truthbase.fts_vector(term))
                 u(lexeme, positions, weights),
             unnest(u.positions) p
    ),
    t AS (
        SELECT array_agg(r.lexeme ORDER BY r.p) AS lex,
               array_agg(r.p - (SELECT min(p) FROM raw) ORDER BY r.p) AS offs
        FROM raw r
    ),
    pos AS (
        SELECT x.lexeme, y.p::integer AS p, y.wt
        FROM t, unnest(tsv) x(lexeme, positions, weights), unnest(x.positions, x.weights) y(p, wt)
        WHERE x.lexeme = ANY (t.lex)
    )
    SELECT coalesce(sum(CASE WHEN f.wt = 'A' THEN tw ELSE 1 END), 0)::float8
    FROM t JOIN pos f ON f.lexeme = t.lex[1]
    WHERE NOT EXISTS (
        SELECT 1 FROM generate_subscripts(t.lex, 1) k
        WHERE k > 1 AND NOT EXISTS (
            SELECT 1 FROM pos o
            WHERE o.lexeme = t.lex[k] AND o.p = f.p + t.offs[k] AND o.wt = f.wt
        )
    )
$$;

-- The full-text arm: chunks matching any term (a word or a phrase), ranked by BM25 as SQLite
-- FTS5's bm25() computes it (k1 = 1.2, b = 0.75; idf = ln((N - df + 0.5) / (df + 0.5)), at
-- least 1e-6; the frequency of a term is title_weight * its title hits + its text hits; the
-- length is the row's tokens over the average), so both backends rank alike. ts_rank_cd has no
-- IDF and ranked far worse on the golden set (MRR 0.38 against 0.63). title_weight 0 searches
-- the text alone.
--
-- Cost: N, the average length and each word's df come from truthbase.fts_stats and
-- truthbase.lexeme_df (kept by triggers); a phrase's df is counted through the GIN index. Only
-- chunks holding one of the rarest terms are scored (exact MaxScore): a term adds at most
-- 2.2 * idf to a chunk's score, so once the n-th best candidate beats the sum of that bound over
-- the terms left out, no chunk outside the candidates can reach the top n. Common words (idf
-- near 0) are then never used to find candidates, only to score them; more terms are taken in,
-- rarest first, until the bound holds. The result is the same as scoring every matching chunk.
--
-- doc_ids (NULL: every document) keeps the chunks of those documents only (truthbase.access:
-- what the caller may see), inside the candidate query, so the arm's n are the best n the caller
-- may see. The statistics (N, df) stay the whole index's, as FTS5's do on SQLite.
CREATE OR REPLACE FUNCTION truthbase.fts_arm(
    terms text[], title_weight float8, n integer, doc_ids text[] DEFAULT NULL
)
RETURNS TABLE (chunk_id bigint, rank integer, score float8)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    tw float8 := greatest(coalesce(title_weight, 0), 0);
    -- A one-lexeme term's frequency, tw * title hits + text hits, from ts_rank_cd (in C): for
    -- one lexeme each hit is its own cover, of density w (weights {D, C, B, A}, each <= 1), so
    -- with weights 0 and 1 it counts hits exactly (float4 holds small integers exactly)
    freq text;
    n_docs float8;
    avgdl float8;
    t_term text[] := '{}';
    t_q tsquery[] := '{}';
    t_df float8[] := '{}';
    t_idf float8[] := '{}';
    t_single boolean[] := '{}';
    term text;
    q tsquery;
    df float8;
    by_df integer[];
    m integer;
    used integer := 0;
    upto integer;
    added_df float8;
    theta float8;
    new_q tsquery;
    old_q tsquery;
    freqs text := '';
    total text := '';
    expr text := '';
    ids bigint[] := '{}';
    scores float8[] := '{}';
BEGIN
    IF n IS NULL OR n <= 0 OR cardinality(doc_ids) = 0 THEN
        RETURN;
    END IF;
    freq := CASE
        WHEN tw = 1 THEN 'ts_rank_cd(''{1,0,0,1}'', c.tsv, %L::tsquery)'
        WHEN tw = 0 THEN 'ts_rank_cd(''{1,0,0,0}'', c.tsv, %L::tsquery)'
        ELSE 'ts_rank_cd(''{1,0,0,0}'', c.tsv, %1$L::tsquery) + ' || tw::text
             || '::float8 * ts_rank_cd(''{0,0,0,1}'', c.tsv, %1$L::tsquery)'
    END;
    SELECT s.n::float8, greatest(s.tokens::float8 / greatest(s.n, 1), 1)
    INTO n_docs, avgdl FROM truthbase.fts_stats s;
    FOREACH term IN ARRAY coalesce((terms)[1:64], '{}'::text[]) LOOP
        CONTINUE WHEN term IS NULL;
        q := truthbase.fts_phrase(term);
        CONTINUE WHEN q IS NULL OR numnode(q) = 0;
        IF numnode(q) = 1 THEN
            SELECT CASE WHEN tw > 0 THEN d.df_any ELSE d.df_text END INTO df
            FROM truthbase.lexeme_df d
            WHERE d.lexeme = (
                SELECT u.lexeme
                FROM unnest(truthbase.fts_vector(term)) u
                LIMIT 1
            );
        ELSE
            SELECT count(*) INTO df FROM truthbase.chunks c
            WHERE c.tsv @@ q AND (tw > 0 OR ts_filter(c.tsv, '{d}') @@ q);
        END IF;
        CONTINUE WHEN coalesce(df, 0) = 0;  -- no chunk has it: it can score nothing
        t_term := t_term || term;
        t_q := t_q || q;
        t_df := t_df || df;
        t_idf := t_idf || greatest(ln((n_docs - df + 0.5) / (df + 0.5)), 1e-6);
        t_single := t_single || (numnode(q) = 1);
    END LOOP;
    m := cardinality(t_q);
    IF m = 0 THEN
        RETURN;
    END IF;
    SELECT array_agg(i ORDER BY t_df[i], i) INTO by_df FROM generate_series(1, m) i;
    -- One scoring expression over all terms, written out (no per-term rows to group): f_i is
    -- term i's frequency in the chunk, k the chunk's length part of BM25.
    FOR i IN 1..m LOOP
        freqs := freqs || format(
            ', %s AS f%s',
            CASE WHEN t_single[i]
                THEN format(freq, t_q[i])
                ELSE format('CASE WHEN c.tsv @@ %L::tsquery '
                            'THEN truthbase.phrase_freq(c.tsv, %L, %s::float8) ELSE 0 END',
                            t_q[i], t_term[i], tw)
            END,
            i);
        total := total || CASE WHEN i > 1 THEN ' + ' ELSE '' END || format('f%s', i);
        expr := expr || CASE WHEN i > 1 THEN ' + ' ELSE '' END
            || format('%s::float8 * (f%s * 2.2) / (f%s + k)', t_idf[i], i, i);
    END LOOP;
    LOOP
        -- Take in the next rarest term(s): at least one, all those the current n-th score
        -- cannot yet exclude, and more while the new candidates stay few.
        theta := CASE WHEN cardinality(ids) >= n THEN scores[n] END;
        upto := used + 1;
        IF theta IS NOT NULL THEN
            WHILE upto < m AND (
                SELECT sum(2.2 * t_idf[by_df[j]]) FROM generate_series(upto + 1, m) j
            ) >= theta LOOP
                upto := upto + 1;
            END LOOP;
        END IF;
        added_df := (SELECT sum(t_df[by_df[j]]) FROM generate_series(used + 1, upto) j);
        WHILE upto < m AND added_df + t_df[by_df[upto + 1]] <= greatest(20 * n, 2000) LOOP
            upto := upto + 1;
            added_df := added_df + t_df[by_df[upto]];
        END LOOP;
        SELECT string_agg('(' || t_q[by_df[j]]::text || ')', ' | ')::tsquery INTO new_q
        FROM generate_series(used + 1, upto) j;
        -- Score the chunks the new terms bring (not those scored already) and keep the best n
        -- of them and the previous best. EXECUTE: planned with this call's values.
        EXECUTE format(
            'SELECT coalesce(array_agg(b.id ORDER BY b.score DESC, b.id), ''{}''), '
            '       coalesce(array_agg(b.score ORDER BY b.score DESC, b.id), ''{}'') '
            'FROM ( '
            '    SELECT a.id, a.score FROM ( '
            '        SELECT x.id, %s AS score, %s AS f FROM ( '
            '            SELECT c.id, 1.2 * (0.25 + 0.75 * c.ntok / %s::float8) AS k %s '
            '            FROM truthbase.chunks c '
            '            WHERE c.tsv @@ $1 %s %s '
            '            OFFSET 0 '
            '        ) x '
            '        UNION ALL '
            '        SELECT p.id, p.score, 1 FROM unnest($3, $4) p(id, score) '
            '    ) a '
            '    WHERE a.f > 0 '
            '    ORDER BY a.score DESC, a.id '
            '    LIMIT $5 '
            ') b',
            expr, total, avgdl, freqs,
            CASE WHEN old_q IS NULL THEN '' ELSE 'AND NOT (c.tsv @@ $2)' END,
            CASE WHEN doc_ids IS NULL THEN '' ELSE 'AND c.doc_id = ANY ($6)' END)
        INTO ids, scores
        USING new_q, old_q, ids, scores, n, doc_ids;
        old_q := CASE WHEN old_q IS NULL THEN new_q ELSE old_q || new_q END;
        used := upto;
        EXIT WHEN used >= m OR (
            cardinality(ids) >= n
            AND scores[n] > (SELECT sum(2.2 * t_idf[by_df[j]]) FROM generate_series(used + 1, m) j)
        );
    END LOOP;
    RETURN QUERY
    SELECT ids[i], i, scores[i] FROM generate_subscripts(ids, 1) i ORDER BY i;
END
$$;

-- The dense arm: cosine (inner product of L2-normalized vectors); a chunk scores the best of its
-- own vector and its windows' (max-sim). Exact by default; use_index reads the HNSW indexes
-- (approximate: each table's nearest 4n rows, then max-sim over those, searched with a beam of
-- ef_search, at least 4n, candidates).
--
-- doc_ids (NULL: every document) keeps the chunks of those documents only, in each nearest-rows
-- query (so the exactness argument below holds within them); with HNSW the filter applies to the
-- index's candidates, so a very selective filter may return fewer than n (pgvector's iterative
-- scans would help; exact search, the default, has no such limit).
CREATE OR REPLACE FUNCTION truthbase.dense_arm(
    qv vector, n integer, use_index boolean, ef_search integer, doc_ids text[] DEFAULT NULL
)
RETURNS TABLE (chunk_id bigint, rank integer, score float8)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    lim integer := 4 * n;
    seen bigint;
    floor_s float8;
    ids bigint[];
    scores float8[];
BEGIN
    IF qv IS NULL OR n <= 0 OR cardinality(doc_ids) = 0 THEN
        RETURN;
    END IF;
    IF use_index THEN
        PERFORM set_config(
            'hnsw.ef_search', least(greatest(4 * n, coalesce(ef_search, 40), 1), 1000)::text, true
        );
        RETURN QUERY
        SELECT g.cid, (row_number() OVER (ORDER BY g.s DESC, g.cid))::integer, g.s
        FROM (
            SELECT a.cid, max(a.s) AS s
            FROM (
                (SELECT c.id AS cid, -(c.vector <#> qv)::float8 AS s
                 FROM truthbase.chunks c WHERE (doc_ids IS NULL OR c.doc_id = ANY (doc_ids))
                 ORDER BY c.vector <#> qv LIMIT 4 * n)
                UNION ALL
                (SELECT w.chunk_id, -(w.vector <#> qv)::float8
                 FROM truthbase.windows w
                 WHERE (doc_ids IS NULL OR w.chunk_id IN
                     (SELECT x.id FROM truthbase.chunks x WHERE x.doc_id = ANY (doc_ids)))
                 ORDER BY w.vector <#> qv LIMIT 4 * n)
            ) a
            GROUP BY a.cid
            ORDER BY s DESC, a.cid
            LIMIT n
        ) g;
    ELSE
        -- Exact, without grouping every row (at 100k chunks the grouping cost as much as the
        -- scan): the n nearest chunk vectors and the lim nearest windows (top-N sorts), max-sim
        -- over their chunks. That is the exact answer once the n-th result scores above the
        -- lim-th window: a chunk left out has its own vector outside the n nearest and every
        -- window at most that score. Otherwise lim grows; past 64n, group everything.
        LOOP
            WITH near AS MATERIALIZED (
                SELECT w.chunk_id AS cid, -(w.vector <#> qv)::float8 AS s
                FROM truthbase.windows w
                WHERE (doc_ids IS NULL OR w.chunk_id IN
                     (SELECT x.id FROM truthbase.chunks x WHERE x.doc_id = ANY (doc_ids)))
                ORDER BY w.vector <#> qv
                FETCH FIRST lim ROWS WITH TIES
            )
            SELECT (SELECT count(*) FROM near), (SELECT min(near.s) FROM near),
                   array_agg(g.cid ORDER BY g.s DESC, g.cid),
                   array_agg(g.s ORDER BY g.s DESC, g.cid)
            INTO seen, floor_s, ids, scores
            FROM (
                SELECT a.cid, max(a.s) AS s
                FROM (
                    (SELECT c.id AS cid, -(c.vector <#> qv)::float8 AS s
                     FROM truthbase.chunks c
                     WHERE (doc_ids IS NULL OR c.doc_id = ANY (doc_ids))
                     ORDER BY c.vector <#> qv
                     FETCH FIRST n ROWS WITH TIES)
                    UNION ALL
                    SELECT near.cid, near.s FROM near
                    UNION ALL
                    SELECT c.id, -(c.vector <#> qv)::float8
                    FROM truthbase.chunks c WHERE c.id IN (SELECT near.cid FROM near)
                ) a
                GROUP BY a.cid
                ORDER BY s DESC, a.cid
                LIMIT n
            ) g;
            IF seen < lim OR (cardinality(ids) >= n AND scores[n] > floor_s) THEN
                RETURN QUERY
                SELECT ids[i], i, scores[i] FROM generate_subscripts(ids, 1) i ORDER BY i;
                RETURN;
            END IF;
            EXIT WHEN lim >= 64 * n;
            lim := lim * 4;
        END LOOP;
        RETURN QUERY
        SELECT g.cid, (row_number() OVER (ORDER BY g.s DESC, g.cid))::integer, g.s
        FROM (
            SELECT a.cid, max(a.s) AS s
            FROM (
                SELECT c.id AS cid, -(c.vector <#> qv)::float8 AS s FROM truthbase.chunks c
                WHERE (doc_ids IS NULL OR c.doc_id = ANY (doc_ids))
                UNION ALL
                SELECT w.chunk_id, -(w.vector <#> qv)::float8 FROM truthbase.windows w
                WHERE (doc_ids IS NULL OR w.chunk_id IN
                     (SELECT x.id FROM truthbase.chunks x WHERE x.doc_id = ANY (doc_ids)))
            ) a
            GROUP BY a.cid
            ORDER BY s DESC, a.cid
            LIMIT n
        ) g;
    END IF;
END
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
