CREATE FUNCTION syncular._operations_http(request bytea, partition text, actor_id text, ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.status, r.content_type, r.body FROM syncular._r_operations_http($1, $2, $3, $4) r;
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
