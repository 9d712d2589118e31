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
