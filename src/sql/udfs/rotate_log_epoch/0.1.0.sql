CREATE FUNCTION syncular.rotate_log_epoch(partition text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text := gen_random_uuid()::text;
BEGIN
  PERFORM syncular._lock_partition(rotate_log_epoch.partition);
  UPDATE syncular.sync_partition_registry r SET log_epoch = epoch, epoch_required = true
   WHERE r.partition = rotate_log_epoch.partition;
  DELETE FROM syncular.sync_clients c WHERE c.partition = rotate_log_epoch.partition;
  RETURN epoch;
END
$$;
