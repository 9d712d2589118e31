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
