COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
$$Rotates a partition's log epoch, e.g. after a backup restore and before traffic resumes (SPEC §2.1, §4.6).
Under the partition lock (syncular._partition_lock, as writers take it, then the registry row FOR UPDATE): sets a new random epoch (gen_random_uuid()::text), epoch_required = true, and deletes every sync_clients row of the partition; clients then reset and re-bootstrap. Returns the new epoch.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) for a partition without a registry row.$$;
