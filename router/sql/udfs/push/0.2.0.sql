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
