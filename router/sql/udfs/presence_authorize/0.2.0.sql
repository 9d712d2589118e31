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
