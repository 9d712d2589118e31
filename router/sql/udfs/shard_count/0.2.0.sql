CREATE FUNCTION syncular.shard_count() RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT count(*)::integer
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o ~ '^p[0-9]+='
$$;
