COMMENT ON FUNCTION syncular.readiness(jsonb) IS
'RFC 0007 §7 ensureSyncServerReady, read-only. checkpoints: this process''s declarations (JSON array of '
'{partition, name, schemaVersion}). Returns {ready, phase, schemaVersion, cause}: phase null when ready; '
'"schema_compile" when no compiled schema is registered; "backfill_checkpoint" when a checkpoint at the running '
'version, in any partition, is neither activated nor declared (cause code sync.storage.checkpoint_incomplete); '
'"storage_migration" when the stored schema is newer (sync.storage.schema_newer) or older / absent '
'(sync.storage.schema_migration_pending), or the same-version stored-layout (sync.storage.stored_layout_mismatch) '
'or physical check (sync.storage.physical_layout_mismatch) fails. schemaVersion: the registered (running) '
'version; cause: {code, message, details} of the underlying error. Never raises for a not-ready state; raises '
'sync.storage.invalid_checkpoints (22023) for a bad declaration list. Writes nothing. SECURITY DEFINER (serving '
'surface, see 90_grants.sql): it only reads the catalog.';
