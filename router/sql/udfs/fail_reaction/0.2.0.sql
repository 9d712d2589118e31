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
