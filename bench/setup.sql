-- Benchmark fixture: one synced table through syncular, and a plain twin for the baseline.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS syncular;
SELECT syncular.ensure_schema('{
  "version": 1,
  "tables": [{
    "name": "items",
    "primaryKey": "id",
    "columns": [
      {"name": "id", "type": "string", "nullable": false},
      {"name": "list_id", "type": "string", "nullable": false},
      {"name": "title", "type": "string", "nullable": false},
      {"name": "qty", "type": "integer", "nullable": false},
      {"name": "done", "type": "boolean", "nullable": false}
    ],
    "scopes": ["list:{list_id}"]
  }]
}'::jsonb);
CREATE FUNCTION public.allow_all(a text, p text, c text) RETURNS jsonb
  LANGUAGE sql IMMUTABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.allow_all(text,text,text)');

-- Baseline: the same row writes with plain SQL (typed columns, upsert on the same key).
CREATE TABLE public.items_plain (
  partition text NOT NULL, id text NOT NULL, list_id text NOT NULL, title text NOT NULL,
  qty bigint NOT NULL, done boolean NOT NULL, PRIMARY KEY (partition, id));

-- Builds a wire-3 push request of n upserts (request building is part of both sides' cost:
-- the baseline calls bench.plain_rows with the same JSON).
CREATE SCHEMA bench;
CREATE FUNCTION bench.rows(n int) RETURNS jsonb LANGUAGE sql VOLATILE AS $$
  SELECT jsonb_agg(jsonb_build_object('id', 'i' || (random() * 20000)::int, 'list_id', 'l1',
                   'title', md5(random()::text), 'qty', (random() * 100)::int, 'done', false))
    FROM generate_series(1, n)
$$;
CREATE FUNCTION bench.epoch(part text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE e text;
BEGIN
  SELECT log_epoch INTO e FROM syncular.sync_partition_registry WHERE partition = part;
  IF e IS NULL THEN
    PERFORM syncular.pull(part, 'bench', 'bench-client', '[]');
    SELECT log_epoch INTO e FROM syncular.sync_partition_registry WHERE partition = part;
  END IF;
  RETURN e;
END $$;
-- n rows with sequential ids r<first> .. r<first+n-1> (the bootstrap fixture: distinct rows)
CREATE FUNCTION bench.seq_rows(first int, n int) RETURNS jsonb LANGUAGE sql VOLATILE AS $$
  SELECT jsonb_agg(jsonb_build_object('id', 'r' || lpad(g::text, 7, '0'), 'list_id', 'l1',
                   'title', md5(g::text), 'qty', g % 100, 'done', false))
    FROM generate_series(first, first + n - 1) g
$$;
-- The request bytes of one push commit of `rows` (upserts) by clientId `client`.
CREATE FUNCTION bench.push_req(part text, client text, rows jsonb) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE ops jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('table', 'items', 'rowId', r->>'id', 'op', 'upsert',
           'payload', encode(syncular.encode_sparse_row('items', r), 'base64')))
    INTO ops FROM jsonb_array_elements(rows) r;
  RETURN syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                         'logEpoch', bench.epoch(part)),
      -- from random() (not gen_random_uuid): a seeded session makes the same ids every run
      jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', md5(random()::text), 'operations', ops))));
END $$;
CREATE FUNCTION bench.push(part text, n int, rows jsonb DEFAULT NULL) RETURNS int LANGUAGE sql AS $$
  SELECT length(syncular.handle(bench.push_req(part, 'bench-client', coalesce(rows, bench.rows(n))),
                                part, 'bench'))
$$;
CREATE FUNCTION bench.plain(part text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE rows jsonb := bench.rows(n); ops jsonb;
BEGIN
  -- the same JSON work as bench.push, then the same row writes in plain SQL
  SELECT jsonb_agg(jsonb_build_object('table', 'items', 'rowId', r->>'id', 'op', 'upsert',
           'payload', encode(convert_to(r::text, 'UTF8'), 'base64')))
    INTO ops FROM jsonb_array_elements(rows) r;
  -- one row per key, in key order, so concurrent baselines cannot deadlock
  INSERT INTO public.items_plain
    SELECT DISTINCT ON (r->>'id') part, r->>'id', r->>'list_id', r->>'title', (r->>'qty')::bigint,
           (r->>'done')::boolean
      FROM jsonb_array_elements(rows) r ORDER BY r->>'id'
  ON CONFLICT (partition, id) DO UPDATE SET list_id = EXCLUDED.list_id, title = EXCLUDED.title,
    qty = EXCLUDED.qty, done = EXCLUDED.done;
  RETURN jsonb_array_length(ops);
END $$;
-- The request bytes of an incremental pull round for one subscription from cursor `c`.
CREATE FUNCTION bench.pull_req(part text, c bigint, commits int, rows int DEFAULT 1000) RETURNS bytea
LANGUAGE sql AS $$
  SELECT syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'bench-puller', 'schemaVersion', 1,
                         'logEpoch', bench.epoch(part)),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', commits, 'limitSnapshotRows', rows,
                         'maxSnapshotPages', 50, 'accept', 1),
      jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's', 'table', 'items',
                         'scopes', '{"list_id": ["l1"]}'::jsonb, 'cursor', c))))
$$;
CREATE FUNCTION bench.pull(part text, c bigint, rows int DEFAULT 1000) RETURNS int LANGUAGE sql AS $$
  SELECT length(syncular.handle(bench.pull_req(part, c, 100, rows), part, 'bench'))
$$;

-- Pre-built requests, looked up by key in the timed statement (the gateway's shape: the request
-- bytes arrive as a parameter).  Push keys: run * 10^7 + client * 10^5 + n (n from 1); the
-- plain baseline writes the same rows (`rows`).  Pull keys: (changes, cursor).
CREATE TABLE bench.req (k bigint PRIMARY KEY, part text NOT NULL, rows jsonb NOT NULL,
                        req bytea NOT NULL);
CREATE TABLE bench.preq (changes int, c bigint, req bytea NOT NULL, PRIMARY KEY (changes, c));
-- Fills bench.req for one case: `runs` runs of `per_client` commits of `ops` upserts for each of
-- `clients` clients (clientId c<client>) over `parts` partitions (p1..p<parts>, at random).
CREATE FUNCTION bench.fill(ops int, clients int, parts int, per_client int, runs int) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE bench.req;
  INSERT INTO bench.req
  SELECT k, part, rows, bench.push_req(part, 'c' || cl, rows)
    FROM (SELECT r * 10000000 + cl * 100000 + n AS k, cl,
                 'p' || (1 + floor(random() * parts))::int AS part, bench.rows(ops) AS rows
            FROM generate_series(0, runs - 1) r, generate_series(0, clients - 1) cl,
                 generate_series(1, per_client) n) x;
  ANALYZE bench.req;
  RETURN (SELECT count(*) FROM bench.req);
END $$;
-- The plain baseline of one pre-built push: the same rows, one upsert statement.
CREATE FUNCTION bench.plain_req(key bigint) RETURNS int LANGUAGE sql AS $$
  INSERT INTO public.items_plain
    SELECT DISTINCT ON (r->>'id') q.part, r->>'id', r->>'list_id', r->>'title', (r->>'qty')::bigint,
           (r->>'done')::boolean
      FROM bench.req q, jsonb_array_elements(q.rows) r WHERE q.k = key ORDER BY r->>'id'
  ON CONFLICT (partition, id) DO UPDATE SET list_id = EXCLUDED.list_id, title = EXCLUDED.title,
    qty = EXCLUDED.qty, done = EXCLUDED.done
  RETURNING 1
$$;

-- Acquire every partition's log epoch up front: a transaction that serves an acquisition round
-- (client record) and then a push round (partition lock) takes the two locks in the opposite
-- order from a concurrent pusher; gateways serve one round per transaction.
SELECT count(bench.epoch(p)) FROM (SELECT 'p' || g AS p FROM generate_series(1, 16) g
                                    UNION ALL VALUES ('pull'), ('boot')) x;

-- Steady state for the push and pull cases: every partition already holds rows and the planner
-- has statistics (as after autovacuum).  The bootstrap case fills its own partition later and
-- runs before any ANALYZE: the cold case.
SELECT sum(bench.push('p' || g, 100)) FROM generate_series(1, 16) g;
SELECT sum(bench.plain('p' || g, 100)) FROM generate_series(1, 16) g;
ANALYZE;
