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
