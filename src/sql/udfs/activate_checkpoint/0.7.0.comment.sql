COMMENT ON FUNCTION syncular.activate_checkpoint(text, text, bigint, bigint, text[]) IS
'RFC 0007 §3.2 activateCheckpoint. Under the partition write lock (syncular._partition_lock, the lock a push takes; the partition row is '
'inserted when missing): (1) the checkpoint must exist and the partition''s fence must be >= its '
'schema_version, else sync.storage.checkpoint_fence_missing (SQLSTATE 55000, details {partition, name, '
'schemaVersion, requiredWriterVersion}); (2) coverage (§3.3) of the source tables (sync_changes.tbl names) above '
'watermark (a commit_seq): changed -> ''stale'', pruned past the watermark -> ''unverifiable'', writing nothing; '
'(3) state = activated, watermark, updated_at_ms where owner_epoch matches and the row is not activated -> '
'''activated'', else ''stale'' (wrong epoch or already activated). Owner epoch 0 activates a never-claimed row. '
'Errors: also sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';
