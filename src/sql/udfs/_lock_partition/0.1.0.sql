-- Locks (partition row, then registry row) and returns the partition's registry row; raises
-- sync.storage.partition_unregistered when the registry has no row for it.
CREATE FUNCTION syncular._lock_partition(partition text)
RETURNS syncular.sync_partition_registry
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  reg syncular.sync_partition_registry;
BEGIN
  -- a registered partition that never pushed has no counter row yet; create it to lock it
  INSERT INTO syncular.sync_partitions AS p (partition) VALUES (_lock_partition.partition)
    ON CONFLICT DO NOTHING;
  PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = _lock_partition.partition FOR UPDATE;
  SELECT * INTO reg FROM syncular.sync_partition_registry r
   WHERE r.partition = _lock_partition.partition FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.partition_unregistered', 'partition is not registered',
                            jsonb_build_object('partition', _lock_partition.partition));
  END IF;
  RETURN reg;
END
$$;
