-- Locks (the partition lock, then the registry row) and returns the partition's registry row;
-- raises sync.storage.partition_unregistered when the registry has no row for it.
CREATE FUNCTION syncular._lock_partition(partition text)
RETURNS syncular.sync_partition_registry
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  reg syncular.sync_partition_registry;
BEGIN
  -- the lock every writer of the partition takes (docs/storage.md "The partition lock")
  PERFORM syncular._partition_lock(_lock_partition.partition);
  SELECT * INTO reg FROM syncular.sync_partition_registry r
   WHERE r.partition = _lock_partition.partition FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.partition_unregistered', 'partition is not registered',
                            jsonb_build_object('partition', _lock_partition.partition));
  END IF;
  RETURN reg;
END
$$;
