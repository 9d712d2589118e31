-- The wall clock in epoch ms, or the pinned value.
CREATE FUNCTION syncular._reaction_now(now_ms bigint) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$$;
