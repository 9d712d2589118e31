CREATE FUNCTION syncular.operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.w, r.max_commit_seq, r.outcome, r.message FROM syncular._r_operations_watch_rerun($1, $2) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
