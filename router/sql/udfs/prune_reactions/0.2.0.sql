CREATE FUNCTION syncular.prune_reactions(partition text, completed_older_than_ms bigint DEFAULT 2592000000, dead_letter_older_than_ms bigint DEFAULT 7776000000, max_rows integer DEFAULT 1000, now_ms bigint DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_prune_reactions($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
