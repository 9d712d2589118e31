COMMENT ON FUNCTION syncular._install_checkpoint(text, text, integer) IS
'Internal (RFC 0007 §3.2 "install"). Inserts the checkpoint row (state declared, watermark/owner_epoch/'
'observed_rows 0, updated_at_ms now) unless (partition, name) exists in any state, then raises '
'sync_writer_fence(partition) to schema_version with max semantics (never lowers). Takes no partition lock.';
