COMMENT ON FUNCTION syncular._install_checkpoints(jsonb, integer) IS
'Internal; ensure_schema hook, called inside the bump transaction right after the marker write (RFC 0007 §3.4 '
'step 6.4, §5.2). checkpoints: JSON array of {partition, name, schemaVersion} (NULL/[] = none); version: the new '
'schema version. Installs every declaration with its own schemaVersion (declared row unless it exists; fence '
'raised to that version, max semantics), then raises the fence of every partition in sync_partitions to version, '
'never lowering one (0.30.4). Errors: sync.storage.invalid_checkpoints (22023); a failure rolls back with the bump.';
