CREATE FUNCTION syncular._reaction_now(now_ms bigint) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(now_ms, syncular.now_ms())
$$;
