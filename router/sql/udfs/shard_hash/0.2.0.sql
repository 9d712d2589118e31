CREATE FUNCTION syncular.shard_hash(partition text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT hashtext(coalesce(partition, ''))
$$;
