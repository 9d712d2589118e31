CREATE FUNCTION syncular.checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._checkpoint_json(c)
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.partition = $1
   ORDER BY c.name COLLATE "C"
$$;
