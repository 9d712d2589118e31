CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10, lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT * FROM syncular._r_claim_reactions($1, $2, $3, $4, $5);
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
