COMMENT ON FUNCTION syncular.declare_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 declareCheckpoint. Installs the checkpoint (partition text, name text: non-empty; schema_version '
'integer >= 1): inserts a declared row unless one exists in any state (ON CONFLICT DO NOTHING) and raises the '
'partition''s writer fence to schema_version, never lowering it; then returns the stored row as JSON {partition, '
'name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs (ms)} whatever its state '
'(re-declaring an activated checkpoint returns it activated). Takes no partition and no migration lock; the fence '
'applies from the caller''s commit. Errors: sync.storage.invalid_checkpoints (22023) for NULL/empty arguments or a '
'version < 1; sync.storage.checkpoint_not_declared (42704) if the row is missing after the install.';
