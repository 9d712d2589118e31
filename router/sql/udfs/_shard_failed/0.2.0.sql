-- PL/Proxy reports its own failures (connecting, sending, a lost connection, timeouts, a broken
-- cluster configuration) as SQLSTATE XX000 "PL/Proxy function <name>(<n>): ...", and passes a
-- shard's error through with the shard's SQLSTATE as "<name>(<n>): [<db>] REMOTE ERROR: <message>",
-- DETAIL "Remote detail: <detail>", HINT "Remote hint: <hint>".
CREATE FUNCTION syncular._shard_failed(sqlstate text, message text) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT sqlstate = 'XX000' AND message LIKE 'PL/Proxy function %'
$$;
