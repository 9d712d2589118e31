COMMENT ON FUNCTION syncular._checkpoint_barrier(jsonb, integer) IS
'Internal; ensure_schema''s checkpoint barrier (RFC 0007 §3.4 step 3), to run before the schema marker is read '
'(so also on a same-version open). Raises sync.storage.checkpoint_incomplete (SQLSTATE 55000, message "a declared '
'backfill checkpoint is not activated and this caller did not declare it", details {phase: '
'"backfill_checkpoint", partition, name} of the first offender in (partition, name) order) when a checkpoint with '
'schema_version = running_version and state <> activated, in ANY partition, is not covered by checkpoints (JSON '
'array of {partition, name, schemaVersion}). Errors: sync.storage.invalid_checkpoints (22023). Writes nothing.';
