CREATE FUNCTION syncular.shard_of(partition text) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular.shard_hash(partition) & (syncular.shard_count() - 1)
$$;
