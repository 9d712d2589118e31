-- syncular_router install script, part 00: the shard map, routing hash and error mapping.
--
-- The router database holds no sync data.  Its schema "syncular" has the serving surface of the
-- syncular extension with the same names and argument lists; each function runs on the shard
-- databases through PL/Proxy (CLUSTER 'syncular'), whose shard map is the SQL/MED server
-- "syncular" (options p0 .. pN-1, a power of two; docs/scaling.md).
--
-- Conventions:
--   * syncular._r_* are the PL/Proxy functions (one remote call each); the public functions are
--     plpgsql wrappers that call them and map PL/Proxy's errors (syncular._route_error).
--   * A partition-keyed call runs on logical shard hashtext(partition) & (N - 1), PL/Proxy's own
--     mapping; a NULL partition is sent to the shard of '' so that the shard refuses it as it
--     refuses it when called directly.
--   * The wrappers are SECURITY INVOKER: PL/Proxy connects to the shards with the user mapping
--     of the calling role, so the shard's own grants (its 90_grants.sql) decide what may run.

\echo Use "CREATE EXTENSION syncular_router" to load this file. \quit

CREATE FUNCTION syncular.shard_hash(partition text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT hashtext(coalesce(partition, ''))
$$;
COMMENT ON FUNCTION syncular.shard_hash(text) IS
'The routing hash of a partition: hashtext(partition) (hashtext('''') for NULL). PL/Proxy runs a partition''s calls '
'on logical shard shard_hash(partition) & (N - 1), N the number of p<i> options of server syncular. Raises nothing.';

CREATE FUNCTION syncular.shard_count() RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT count(*)::integer
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o ~ '^p[0-9]+='
$$;
COMMENT ON FUNCTION syncular.shard_count() IS
'The number of logical shards: the p<i> options of the SQL/MED server syncular (0 when the server does not exist). '
'Raises nothing.';

CREATE FUNCTION syncular.shard_of(partition text) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular.shard_hash(partition) & (syncular.shard_count() - 1)
$$;
COMMENT ON FUNCTION syncular.shard_of(text) IS
'The logical shard (0 .. N-1, the option p<i> of server syncular) that serves a partition, as PL/Proxy maps it: '
'shard_hash(partition) & (N - 1). NULL-free; meaningless (-1 mask) when the server has no p<i> options.';

CREATE FUNCTION syncular.shard_connstr(shard integer) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT substr(o, length('p' || shard::text) + 2)
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o LIKE 'p' || shard::text || '=%'
$$;
COMMENT ON FUNCTION syncular.shard_connstr(integer) IS
'The libpq connection string of logical shard `shard` (option p<shard> of server syncular), NULL when absent. '
'Raises nothing.';

-- The error body of handle_http, as the shard's sql_api.c writes it:
-- {code, category, retryable, recommendedAction, message, details?}.
CREATE FUNCTION syncular._unavailable_body() RETURNS bytea
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT convert_to('{"code":"sync.schema_not_ready","category":"internal","retryable":true,'
                    '"recommendedAction":"retryLater","message":"server schema is not ready for this request",'
                    '"details":{"shardUnavailable":true}}', 'UTF8')
$$;
COMMENT ON FUNCTION syncular._unavailable_body() IS
'Internal. The HTTP JSON body a round of an unreachable shard answers: sync.schema_not_ready (503, retryable, '
'retryLater) with details {"shardUnavailable": true}.';

-- PL/Proxy reports its own failures (connecting, sending, a lost connection, timeouts, a broken
-- cluster configuration) as SQLSTATE XX000 "PL/Proxy function <name>(<n>): ...", and passes a
-- shard's error through with the shard's SQLSTATE as "<name>(<n>): [<db>] REMOTE ERROR: <message>",
-- DETAIL "Remote detail: <detail>", HINT "Remote hint: <hint>".
CREATE FUNCTION syncular._shard_failed(sqlstate text, message text) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT sqlstate = 'XX000' AND message LIKE 'PL/Proxy function %'
$$;
COMMENT ON FUNCTION syncular._shard_failed(text, text) IS
'Internal. True when an error caught around a PL/Proxy call is PL/Proxy''s own failure to reach the shard '
'(SQLSTATE XX000, message "PL/Proxy function ..."), not an error the shard raised.';

CREATE FUNCTION syncular._route_error(partition text, sqlstate text, message text, detail text, hint text,
                                      cluster_wide boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m text[];
BEGIN
  detail := nullif(detail, '');
  hint := nullif(hint, '');
  IF syncular._shard_failed(sqlstate, message) THEN
    -- the reason goes to the server log only; the caller gets the catalogue error
    IF cluster_wide THEN
      RAISE LOG 'syncular_router: a shard is unavailable for a cluster-wide call: %', message;
    ELSE
      RAISE LOG 'syncular_router: shard % unavailable for partition %: %',
        syncular.shard_of(partition), quote_literal(coalesce(partition, '')), message;
    END IF;
    RAISE EXCEPTION 'server schema is not ready for this request' USING ERRCODE = '55000',
      DETAIL = '{"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}';
  END IF;
  m := regexp_match(message, '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: (.*)$', 's');
  IF m IS NOT NULL THEN
    message := m[1];
    detail := regexp_replace(detail, '^Remote detail: ', '');
    hint := regexp_replace(hint, '^Remote hint: ', '');
  END IF;
  -- re-raise the shard's error as the shard raised it (SQLSTATE, message, DETAIL, HINT)
  IF detail IS NULL AND hint IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
  ELSIF hint IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail;
  ELSIF detail IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
  ELSE
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail, HINT = hint;
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._route_error(text, text, text, text, text, boolean) IS
'Internal. Raises the error caught around a routed call: PL/Proxy''s own failure (shard unreachable) as '
'sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code": "sync.schema_not_ready", "details": {"shardUnavailable": '
'true}}) after a LOG line with PL/Proxy''s message (and the shard and partition unless cluster_wide); a shard''s error with its SQLSTATE, '
'message, DETAIL and HINT as the shard raised them (PL/Proxy''s prefixes removed).';
-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.

-- the row type claim_reactions returns (the shard's table syncular.sync_reactions)
CREATE TYPE syncular.sync_reactions AS (
  partition                TEXT,
  idempotency_key          TEXT,
  type                     TEXT,
  version                  INTEGER,
  payload                  JSONB,
  source_client_id         TEXT,
  source_client_commit_id  TEXT,
  source_commit_seq        BIGINT,
  created_at_ms            BIGINT,
  available_at_ms          BIGINT,
  status                   TEXT,
  attempts                 INTEGER,
  max_attempts             INTEGER,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB
);
COMMENT ON TYPE syncular.sync_reactions IS
'The rows of the shard table syncular.sync_reactions, as syncular.claim_reactions returns them through the router.';

CREATE FUNCTION syncular._r_handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle;
$$;
COMMENT ON FUNCTION syncular._r_handle(bytea, text, text) IS
'Internal. PL/Proxy call of syncular.handle on the shard of partition.';

CREATE FUNCTION syncular.handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_handle($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($2, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Routed: one SSP2 round (request bytes in, response bytes out) served by syncular.handle on the shard of partition '
'(logical shard hashtext(partition) & (N - 1)); the response bytes are the shard''s. Errors: those of the shard''s '
'syncular.handle with their SQLSTATE, message, DETAIL and HINT; a shard PL/Proxy cannot reach (connection refused or '
'lost, timeout, bad cluster configuration) raises sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code": '
'"sync.schema_not_ready", "details": {"shardUnavailable": true}}); the PL/Proxy message goes to the server log. '
'The round commits on the shard when it ends, whatever the router''s transaction does. docs/scaling.md, SPEC §1.';

CREATE FUNCTION syncular._r_handle_http(request bytea, partition text, actor_id text, content_type text)
RETURNS TABLE(status integer, content_type text, body bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle_http;
$$;
COMMENT ON FUNCTION syncular._r_handle_http(bytea, text, text, text) IS
'Internal. PL/Proxy call of syncular.handle_http on the shard of partition.';

CREATE FUNCTION syncular._handle_http(request bytea, partition text, actor_id text, ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.status, r.content_type, r.body FROM syncular._r_handle_http($1, $2, $3, $4) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  IF syncular._shard_failed(st, msg) THEN
    RAISE LOG 'syncular_router: shard % unavailable for partition %: %',
      syncular.shard_of($2), quote_literal(coalesce($2, '')), msg;
    RETURN QUERY SELECT 503, 'application/json'::text, syncular._unavailable_body();
    RETURN;
  END IF;
  PERFORM syncular._route_error($2, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._handle_http(bytea, text, text, text) IS
'Internal. The body of the routed syncular.handle_http (a plpgsql function cannot name an argument and a result '
'column content_type both).';

-- LANGUAGE sql: the argument and the result column share the name content_type, as on the shard
CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http($1, $2, $3, $4)
$$;
COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'Routed: POST /sync as one row, the shard''s syncular.handle_http on the shard of partition (the same status, '
'content type and body). A shard PL/Proxy cannot reach answers 503 application/json {"code": "sync.schema_not_ready", '
'"category": "internal", "retryable": true, "recommendedAction": "retryLater", "message": "server schema is not '
'ready for this request", "details": {"shardUnavailable": true}} (the client retries later, as for a closed serve '
'gate); the PL/Proxy message goes to the server log. Query cancellation is re-raised. docs/scaling.md, '
'wire-format.md §9.';

CREATE FUNCTION syncular._r_push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(p_partition);
  TARGET syncular.push;
$$;
CREATE FUNCTION syncular.push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_push($1, $2, $3, $4);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_push(text,text,text,jsonb) IS
'Internal. PL/Proxy call of syncular.push on the shard of p_partition.';
COMMENT ON FUNCTION syncular.push(text,text,text,jsonb) IS
'Routed: runs syncular.push (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of p_partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb, p_limits jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(p_partition);
  TARGET syncular.pull;
$$;
CREATE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb, p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_pull($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_pull(text,text,text,jsonb,jsonb) IS
'Internal. PL/Proxy call of syncular.pull on the shard of p_partition.';
COMMENT ON FUNCTION syncular.pull(text,text,text,jsonb,jsonb) IS
'Routed: runs syncular.pull (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of p_partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_serve_gate(partition text, checkpoints jsonb, running_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.serve_gate;
$$;
CREATE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]'::jsonb, running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_serve_gate($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_serve_gate(text,jsonb,integer) IS
'Internal. PL/Proxy call of syncular.serve_gate on the shard of partition.';
COMMENT ON FUNCTION syncular.serve_gate(text,jsonb,integer) IS
'Routed: runs syncular.serve_gate (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.declare_checkpoint;
$$;
CREATE FUNCTION syncular.declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_declare_checkpoint($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_declare_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.declare_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.declare_checkpoint(text,text,integer) IS
'Routed: runs syncular.declare_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_checkpoint;
$$;
CREATE FUNCTION syncular.claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_claim_checkpoint($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_claim_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.claim_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.claim_checkpoint(text,text,integer) IS
'Routed: runs syncular.claim_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_advance_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.advance_checkpoint;
$$;
CREATE FUNCTION syncular.advance_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_advance_checkpoint($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_advance_checkpoint(text,text,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.advance_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.advance_checkpoint(text,text,bigint,bigint,bigint) IS
'Routed: runs syncular.advance_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_activate_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, sources text[])
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.activate_checkpoint;
$$;
CREATE FUNCTION syncular.activate_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, sources text[])
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_activate_checkpoint($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Internal. PL/Proxy call of syncular.activate_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Routed: runs syncular.activate_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.checkpoints;
$$;
CREATE FUNCTION syncular.checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT * FROM syncular._r_checkpoints($1);
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_checkpoints(text) IS
'Internal. PL/Proxy call of syncular.checkpoints on the shard of partition.';
COMMENT ON FUNCTION syncular.checkpoints(text) IS
'Routed: runs syncular.checkpoints (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.source_coverage_seq;
$$;
CREATE FUNCTION syncular.source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_source_coverage_seq($1, $2);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_source_coverage_seq(text,text[]) IS
'Internal. PL/Proxy call of syncular.source_coverage_seq on the shard of partition.';
COMMENT ON FUNCTION syncular.source_coverage_seq(text,text[]) IS
'Routed: runs syncular.source_coverage_seq (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_prune(partition text, retention jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune;
$$;
CREATE FUNCTION syncular.prune(partition text, retention jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_prune($1, $2);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_prune(text,jsonb) IS
'Internal. PL/Proxy call of syncular.prune on the shard of partition.';
COMMENT ON FUNCTION syncular.prune(text,jsonb) IS
'Routed: runs syncular.prune (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_rotate_log_epoch(partition text)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.rotate_log_epoch;
$$;
CREATE FUNCTION syncular.rotate_log_epoch(partition text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_rotate_log_epoch($1);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_rotate_log_epoch(text) IS
'Internal. PL/Proxy call of syncular.rotate_log_epoch on the shard of partition.';
COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
'Routed: runs syncular.rotate_log_epoch (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_claim_reactions(partition text, owner text, "limit" integer, lease_ms bigint, now_ms bigint)
RETURNS SETOF syncular.sync_reactions LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_reactions;
$$;
CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10, lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT * FROM syncular._r_claim_reactions($1, $2, $3, $4, $5);
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_claim_reactions(text,text,integer,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.claim_reactions on the shard of partition.';
COMMENT ON FUNCTION syncular.claim_reactions(text,text,integer,bigint,bigint) IS
'Routed: runs syncular.claim_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_renew_reaction_lease(partition text, idempotency_key text, owner text, lease_ms bigint, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.renew_reaction_lease;
$$;
CREATE FUNCTION syncular.renew_reaction_lease(partition text, idempotency_key text, owner text, lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_renew_reaction_lease($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_renew_reaction_lease(text,text,text,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.renew_reaction_lease on the shard of partition.';
COMMENT ON FUNCTION syncular.renew_reaction_lease(text,text,text,bigint,bigint) IS
'Routed: runs syncular.renew_reaction_lease (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_complete_reaction(partition text, idempotency_key text, owner text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.complete_reaction;
$$;
CREATE FUNCTION syncular.complete_reaction(partition text, idempotency_key text, owner text, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_complete_reaction($1, $2, $3, $4);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_complete_reaction(text,text,text,bigint) IS
'Internal. PL/Proxy call of syncular.complete_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.complete_reaction(text,text,text,bigint) IS
'Routed: runs syncular.complete_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_fail_reaction(partition text, idempotency_key text, owner text, failure jsonb, permanent boolean, base_ms bigint, cap_ms bigint, now_ms bigint)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.fail_reaction;
$$;
CREATE FUNCTION syncular.fail_reaction(partition text, idempotency_key text, owner text, failure jsonb, permanent boolean DEFAULT false, base_ms bigint DEFAULT 1000, cap_ms bigint DEFAULT 300000, now_ms bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_fail_reaction($1, $2, $3, $4, $5, $6, $7, $8);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_fail_reaction(text,text,text,jsonb,boolean,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.fail_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.fail_reaction(text,text,text,jsonb,boolean,bigint,bigint,bigint) IS
'Routed: runs syncular.fail_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_retry_dead_letter_reaction(partition text, idempotency_key text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.retry_dead_letter_reaction;
$$;
CREATE FUNCTION syncular.retry_dead_letter_reaction(partition text, idempotency_key text, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_retry_dead_letter_reaction($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_retry_dead_letter_reaction(text,text,bigint) IS
'Internal. PL/Proxy call of syncular.retry_dead_letter_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text,text,bigint) IS
'Routed: runs syncular.retry_dead_letter_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_prune_reactions(partition text, completed_older_than_ms bigint, dead_letter_older_than_ms bigint, max_rows integer, now_ms bigint)
RETURNS integer LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune_reactions;
$$;
CREATE FUNCTION syncular.prune_reactions(partition text, completed_older_than_ms bigint DEFAULT 2592000000, dead_letter_older_than_ms bigint DEFAULT 7776000000, max_rows integer DEFAULT 1000, now_ms bigint DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_prune_reactions($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_prune_reactions(text,bigint,bigint,integer,bigint) IS
'Internal. PL/Proxy call of syncular.prune_reactions on the shard of partition.';
COMMENT ON FUNCTION syncular.prune_reactions(text,bigint,bigint,integer,bigint) IS
'Routed: runs syncular.prune_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

-- syncular_router install script, part 20: cluster-wide calls (every shard).
--
-- PL/Proxy runs a RUN ON ALL query on every shard in parallel, each in its own transaction, and
-- raises when any shard fails; there is no two-phase commit.  A call that changes the shards
-- (schema and hook registration) is therefore made in two rounds through the shard function
-- syncular.cluster_call: a check round (every shard runs the call and rolls it back) and, only
-- when every shard passed it, the apply round.  A shard that refuses, or that cannot be reached,
-- fails the check round and nothing is applied anywhere.  A shard lost between the two rounds
-- leaves the call applied on the others; these calls are idempotent, so the operator re-runs it.

CREATE FUNCTION syncular._r_cluster_call(call text, args jsonb, apply boolean)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON ALL;
  SELECT pg_catalog.jsonb_build_object('database', pg_catalog.current_database(),
                                       'result', syncular.cluster_call(call, args, apply));
$$;
COMMENT ON FUNCTION syncular._r_cluster_call(text, jsonb, boolean) IS
'Internal. PL/Proxy call of syncular.cluster_call on every shard; one {database, result} per shard.';

CREATE FUNCTION syncular._cluster(call text, args jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  results jsonb;
  actions jsonb;
  st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    -- the check round: every shard must accept before any shard applies
    PERFORM count(*) FROM syncular._r_cluster_call(call, args, false);
    SELECT jsonb_agg(r ORDER BY r ->> 'database') INTO results
      FROM syncular._r_cluster_call(call, args, true) r;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT;
    PERFORM syncular._route_error(NULL, st, msg, det, hnt, true);
  END;
  SELECT jsonb_agg(DISTINCT e -> 'result' -> 'action') INTO actions FROM jsonb_array_elements(results) e;
  RETURN jsonb_build_object('shards', results)
      || CASE WHEN call <> 'ensure_schema' THEN '{}'::jsonb
              WHEN jsonb_array_length(actions) = 1 THEN jsonb_build_object('action', actions -> 0)
              ELSE '{"action": "mixed"}'::jsonb END;
END
$$;
COMMENT ON FUNCTION syncular._cluster(text, jsonb) IS
'Internal. A cluster-wide call in two rounds (check on every shard, then apply on every shard); returns '
'{shards: [{database, result}, ...]} (ordered by database), with "action" for ensure_schema.';

-- The database name of a logical shard (its connection string's dbname).
CREATE FUNCTION syncular._shard_database(shard integer) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  db text := substring(syncular.shard_connstr(shard) FROM '(?:^|\s)dbname=([^\s'']+)');
BEGIN
  IF db IS NULL THEN
    RAISE EXCEPTION 'syncular_router: the connection string of shard % names no dbname', shard
      USING ERRCODE = '22023',
            HINT = 'Write the p<i> options of server syncular as ''host=... port=... dbname=...''.';
  END IF;
  RETURN db;
END
$$;
COMMENT ON FUNCTION syncular._shard_database(integer) IS
'Internal. The dbname of logical shard `shard`''s connection string; raises 22023 when it names none.';

-- Checkpoint declarations go to the shard of their partition only: each is tagged with that
-- shard's database name, which the shard's cluster_call compares with current_database().
CREATE FUNCTION syncular._tag_checkpoints(checkpoints jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(checkpoints) = 'array' THEN
           (SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(d) = 'object' AND jsonb_typeof(d -> 'partition') = 'string'
                                           THEN d || jsonb_build_object('shardDatabase',
                                                  syncular._shard_database(syncular.shard_of(d ->> 'partition')))
                                           ELSE d END ORDER BY i), '[]'::jsonb)
              FROM jsonb_array_elements(checkpoints) WITH ORDINALITY x(d, i))
         ELSE coalesce(checkpoints, '[]'::jsonb) END
$$;
COMMENT ON FUNCTION syncular._tag_checkpoints(jsonb) IS
'Internal. The checkpoint declarations with "shardDatabase" (the database of the partition''s shard) added to each.';

CREATE FUNCTION syncular.ensure_schema(ir jsonb, checkpoints jsonb DEFAULT '[]'::jsonb,
                                       app_schema text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('ensure_schema', jsonb_strip_nulls(jsonb_build_object(
           'ir', ir, 'checkpoints', syncular._tag_checkpoints(checkpoints), 'appSchema', app_schema)))
$$;
COMMENT ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) IS
'Cluster-wide: registers the app schema (syncular.ensure_schema''s arguments) on every shard, all or nothing: every '
'shard first runs it and rolls it back, then, when none refused, every shard applies it. app_schema NULL: the '
'registered app schema of each shard, else public (the router''s current_schema() does not cross). A checkpoint '
'declaration is installed on the shard of its partition only (its writer fence and serve gate are that shard''s). Returns '
'{"action": <the shards'' common action, or "mixed">, "shards": [{"database", "result"}, ...]}. Errors: the first '
'refusing shard''s error (its SQLSTATE, message, DETAIL), nothing applied anywhere; an unreachable shard raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}), nothing applied. A shard lost between the check '
'and the apply round leaves the others applied: re-run (ensure_schema is idempotent). RFC 0007 §3.4, docs/scaling.md.';

CREATE FUNCTION syncular.set_scope_resolver(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_scope_resolver', jsonb_build_object('fn', fn))
$$;
COMMENT ON FUNCTION syncular.set_scope_resolver(text) IS
'Cluster-wide syncular.set_scope_resolver: fn is the schema-qualified signature text (''app.allowed(text,text,text)''), '
'resolved on each shard (the router does not have the app''s functions), NULL to unregister. All or nothing like '
'syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors: the shard''s (an unknown function: '
'42883; a bad signature: the hook check''s catalogue error), or sync.schema_not_ready (55000) for an unreachable '
'shard. hooks.md.';

CREATE FUNCTION syncular.set_row_validator(tbl text, fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_row_validator', jsonb_build_object('table', tbl, 'fn', fn))
$$;
COMMENT ON FUNCTION syncular.set_row_validator(text, text) IS
'Cluster-wide syncular.set_row_validator(tbl, fn): fn as in syncular.set_scope_resolver(text). All or nothing; '
'errors as syncular.set_scope_resolver(text). hooks.md.';

CREATE FUNCTION syncular.set_commit_validator(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_commit_validator', jsonb_build_object('fn', fn))
$$;
COMMENT ON FUNCTION syncular.set_commit_validator(text) IS
'Cluster-wide syncular.set_commit_validator: fn as in syncular.set_scope_resolver(text). All or nothing; errors as '
'syncular.set_scope_resolver(text). hooks.md.';

CREATE FUNCTION syncular.set_reaction_planner(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_reaction_planner', jsonb_build_object('fn', fn))
$$;
COMMENT ON FUNCTION syncular.set_reaction_planner(text) IS
'Cluster-wide syncular.set_reaction_planner: fn as in syncular.set_scope_resolver(text). All or nothing; errors as '
'syncular.set_scope_resolver(text). hooks.md.';

CREATE FUNCTION syncular._r_readiness(checkpoints jsonb)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON ALL;
  SELECT pg_catalog.jsonb_build_object('database', pg_catalog.current_database(),
                                       'readiness', syncular.readiness(checkpoints));
$$;
COMMENT ON FUNCTION syncular._r_readiness(jsonb) IS
'Internal. PL/Proxy call of syncular.readiness on every shard; one {database, readiness} per shard.';

CREATE FUNCTION syncular.readiness(checkpoints jsonb DEFAULT '[]'::jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  shards jsonb;
  st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    SELECT jsonb_agg(r ORDER BY r ->> 'database') INTO shards FROM syncular._r_readiness(checkpoints) r;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT;
    PERFORM syncular._route_error(NULL, st, msg, det, hnt, true);
  END;
  -- ready when every shard is; otherwise the first not-ready shard (by database name) speaks
  RETURN coalesce((SELECT e -> 'readiness' FROM jsonb_array_elements(shards) WITH ORDINALITY x(e, i)
                    WHERE NOT (e -> 'readiness' ->> 'ready')::boolean ORDER BY i LIMIT 1),
                  shards -> 0 -> 'readiness')
         || jsonb_build_object('shards', shards);
END
$$;
COMMENT ON FUNCTION syncular.readiness(jsonb) IS
'Cluster-wide syncular.readiness(checkpoints) (RFC 0007 §7): {ready, phase, schemaVersion, cause} of the first shard '
'(by database name) that is not ready, or of the first shard when all are, plus "shards": [{"database", "readiness"}, '
'...]. Errors: a shard''s error (sync.storage.invalid_checkpoints, 22023, for a bad list); an unreachable shard raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}): the cluster is not ready as a whole. Writes nothing.';
-- syncular_router install script, part 30: the surface syncular-gateway uses (docs/gateway.md,
-- docs/scaling.md "The gateway in front of the router").
--
--   * realtime_connect, realtime_fanout, realtime_ack and presence_authorize are routed to the
--     shard of their partition like the round functions (part 10);
--   * the SQL authenticator lives in the router database itself: it answers which partition a
--     request belongs to, so it runs before any shard is chosen.  set_authenticator registers it
--     here (table syncular.router_settings), authenticate runs it here, and
--     handle_http_authenticated runs it and then the routed handle_http (SPEC §1.1);
--   * shard_conninfos lists the distinct shard databases, so that the gateway LISTENs on every
--     one of them (NOTIFY syncular_commit is issued by the shard that commits, SPEC §8.2).

CREATE FUNCTION syncular._r_realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.realtime_connect;
$$;
COMMENT ON FUNCTION syncular._r_realtime_connect(text, text, text) IS
'Internal. PL/Proxy call of syncular.realtime_connect on the shard of partition.';

CREATE FUNCTION syncular.realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_realtime_connect($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.realtime_connect(text, text, text) IS
'Routed: runs syncular.realtime_connect (same arguments, result and errors; see its COMMENT in the syncular '
'extension) on the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md, SPEC §8.1.';

CREATE FUNCTION syncular._r_realtime_fanout(partition text, commit_seq bigint, connections jsonb)
RETURNS TABLE(conn bigint, action text, reason text, body bytea, next_cursor bigint) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.realtime_fanout;
$$;
COMMENT ON FUNCTION syncular._r_realtime_fanout(text, bigint, jsonb) IS
'Internal. PL/Proxy call of syncular.realtime_fanout on the shard of partition.';

CREATE FUNCTION syncular.realtime_fanout(partition text, commit_seq bigint, connections jsonb)
RETURNS TABLE(conn bigint, action text, reason text, body bytea, next_cursor bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.conn, r.action, r.reason, r.body, r.next_cursor
    FROM syncular._r_realtime_fanout($1, $2, $3) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.realtime_fanout(text, bigint, jsonb) IS
'Routed: runs syncular.realtime_fanout (same arguments, rows and errors; see its COMMENT in the syncular extension) on '
'the shard of partition; the rows come back in the shard''s order. A shard PL/Proxy cannot reach raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}). The registrations are trusted input: grant '
'EXECUTE only to the gateway role. docs/scaling.md, SPEC §8.2.';

CREATE FUNCTION syncular._r_realtime_ack(partition text, actor_id text, client_id text, cursor bigint, log_epoch text)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.realtime_ack;
$$;
COMMENT ON FUNCTION syncular._r_realtime_ack(text, text, text, bigint, text) IS
'Internal. PL/Proxy call of syncular.realtime_ack on the shard of partition.';

CREATE FUNCTION syncular.realtime_ack(partition text, actor_id text, client_id text, cursor bigint, log_epoch text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_realtime_ack($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) IS
'Routed: runs syncular.realtime_ack (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md, SPEC §8.2.';

CREATE FUNCTION syncular._r_presence_authorize(partition text, actor_id text, client_id text, scope_keys text[])
RETURNS text[] LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.presence_authorize;
$$;
COMMENT ON FUNCTION syncular._r_presence_authorize(text, text, text, text[]) IS
'Internal. PL/Proxy call of syncular.presence_authorize on the shard of partition.';

CREATE FUNCTION syncular.presence_authorize(partition text, actor_id text, client_id text, scope_keys text[])
RETURNS text[] LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_presence_authorize($1, $2, $3, $4);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.presence_authorize(text, text, text, text[]) IS
'Routed: runs syncular.presence_authorize (same arguments, result and errors; see its COMMENT in the syncular '
'extension) on the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md, SPEC §8.6.3.';

-- ---------------------------------------------------------------- the shard databases to LISTEN on

CREATE FUNCTION syncular.shard_conninfos() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT DISTINCT regexp_replace(substr(o, strpos(o, '=') + 1),
                                 '(^|\s)(user|password)\s*=\s*(''([^''\\]|\\.)*''|\S+)', '', 'g')
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o ~ '^p[0-9]+='
   ORDER BY 1
$$;
COMMENT ON FUNCTION syncular.shard_conninfos() IS
'The distinct shard databases of the cluster: the libpq connection strings of the p<i> options of server syncular, '
'without their user and password keywords, sorted; no rows when the server does not exist. syncular-gateway '
'LISTENs for syncular_commit on each (the NOTIFY is issued by the shard that commits, SPEC §8.2), connecting with '
'its own role and credentials, and re-reads the list periodically (a moved shard). SECURITY DEFINER so that the '
'gateway role needs no access to the SQL/MED catalogs: grant it EXECUTE. Raises nothing. docs/scaling.md.';

-- ---------------------------------------------------------------- the SQL authenticator (SPEC §1.1)

CREATE TABLE syncular.router_settings (
  id            integer PRIMARY KEY CHECK (id = 1),
  authenticator regprocedure
);
COMMENT ON TABLE syncular.router_settings IS
'The router''s settings (a singleton row, id 1): authenticator, the function syncular.set_authenticator registered '
'in the router database.';
SELECT pg_catalog.pg_extension_config_dump('syncular.router_settings', '');

CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
  expected constant text := '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb';
BEGIN
  IF fn IS NOT NULL THEN
    SELECT * INTO p FROM pg_proc WHERE oid = fn;
    IF NOT FOUND OR p.prokind <> 'f' OR p.proretset OR p.prorettype <> 'jsonb'::regtype OR p.provariadic <> 0
       OR p.proargtypes <> array_to_string(ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[]::oid[], ' ')::oidvector THEN
      RAISE EXCEPTION 'an authenticator must be a function %', expected USING ERRCODE = '22023',
        DETAIL = jsonb_build_object('code', 'sync.storage.hook_signature', 'details',
                   jsonb_build_object('hook', 'authenticator', 'function', fn::text, 'expected', expected))::text;
    END IF;
  END IF;
  INSERT INTO syncular.router_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
COMMENT ON FUNCTION syncular.set_authenticator(regprocedure) IS
'Registers the request authenticator in the router database (SPEC §1.1 host authentication), or unregisters it when '
'fn is NULL. Not routed: the authenticator answers the partition, so it runs in the router before a shard is chosen; '
'it is a function of the router database (method text, path text, headers jsonb, query jsonb) RETURNS jsonb answering '
'{"actorId": text, "partition": text} or NULL, as for syncular.set_authenticator in the syncular extension. Stored '
'in syncular.router_settings.authenticator. Owner-only. Errors: sync.storage.hook_signature (SQLSTATE 22023; DETAIL '
'{"code": "sync.storage.hook_signature", "details": {hook, function, expected}}) for any other signature, a procedure, '
'an aggregate, a set-returning or variadic function. docs/scaling.md.';

CREATE FUNCTION syncular.authenticate(method text, path text, headers jsonb, query jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  fn regprocedure;
  answer jsonb;
BEGIN
  SELECT s.authenticator INTO fn FROM syncular.router_settings s WHERE s.id = 1;
  IF fn IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format('SELECT %s($1, $2, $3, $4)', fn::oid::regproc)
    INTO answer USING method, path, coalesce(headers, '{}'), coalesce(query, '{}');
  IF answer IS NULL OR jsonb_typeof(answer) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(answer) IS DISTINCT FROM 'object'
     OR jsonb_typeof(answer -> 'actorId') IS DISTINCT FROM 'string' OR answer ->> 'actorId' = ''
     OR jsonb_typeof(answer -> 'partition') IS DISTINCT FROM 'string' OR answer ->> 'partition' = '' THEN
    RAISE EXCEPTION 'the authenticator must answer {"actorId": text, "partition": text} or NULL'
      USING ERRCODE = 'XX000',
            DETAIL = jsonb_build_object('code', 'sync.internal_error', 'details',
                                        jsonb_build_object('authenticator', fn::text))::text;
  END IF;
  RETURN jsonb_build_object('actorId', answer ->> 'actorId', 'partition', answer ->> 'partition');
END
$$;
COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered in the router with syncular.set_authenticator for one request (SPEC §1.1), in the '
'router database. Arguments, result and errors as syncular.authenticate of the syncular extension: '
'{"actorId", "partition"} or NULL; sync.internal_error (XX000) for any other answer; whatever the authenticator '
'raises. syncular-gateway calls it once at each realtime WebSocket upgrade. docs/scaling.md.';

CREATE FUNCTION syncular._auth_error_body(code text, message text) RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE code WHEN 'sync.auth_required' THEN 401 ELSE 500 END, 'application/json'::text,
         convert_to(json_build_object('code', code,
                                      'category', CASE code WHEN 'sync.auth_required' THEN 'auth-required' ELSE 'internal' END,
                                      'retryable', true,
                                      'recommendedAction', CASE code WHEN 'sync.auth_required' THEN 'refreshAuth' ELSE 'retryLater' END,
                                      'message', message)::text, 'UTF8')
$$;
COMMENT ON FUNCTION syncular._auth_error_body(text, text) IS
'Internal. The HTTP answer of a refused request (sync.auth_required: 401) or of a failing authenticator '
'(sync.internal_error: 500) as the shard''s handle_http_authenticated writes it (SPEC §10.1 body).';

CREATE FUNCTION syncular._handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                    ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  who jsonb;
  msg text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.internal_error', 'internal server error');
    RETURN;
  END;
  IF who IS NULL THEN
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.auth_required', 'authentication required');
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular._handle_http(request, who ->> 'partition', who ->> 'actorId', ctype) h;
END
$$;
COMMENT ON FUNCTION syncular._handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'Internal. The body of the router''s syncular.handle_http_authenticated.';

CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http_authenticated($1, $2, $3, $4, $5, $6)
$$;
COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication through the router (SPEC §1.1): runs the router''s syncular.authenticate, '
'then the routed syncular.handle_http(request, partition, actorId, request_content_type) on the shard of the answered '
'partition. NULL from the authenticator (or none registered) gives 401 sync.auth_required; an error raised by the '
'authenticator gives 500 sync.internal_error with a fixed message (the text goes to the router''s server log); '
'otherwise what the routed handle_http answers (503 {"shardUnavailable": true} for a shard PL/Proxy cannot reach). '
'The authenticator runs in the router''s transaction, the round in its own transaction on the shard. Query '
'cancellation is re-raised. docs/scaling.md.';
-- syncular_router install script, part 90: privileges.
--
-- The same model as the syncular extension's 90_grants.sql: nothing is executable by PUBLIC; the
-- public functions are SECURITY DEFINER with a fixed search_path, so PL/Proxy reaches the shards
-- with the user mapping of the extension owner, and the router's grants decide who may serve
-- which call.  Operators grant per role, for example:
--
--   GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text)            TO sync_gateway;
--
-- Cluster-wide calls (ensure_schema, set_*), maintenance and the barrier stay owner-only.

GRANT USAGE ON SCHEMA syncular TO PUBLIC;
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
