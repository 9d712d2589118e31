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
