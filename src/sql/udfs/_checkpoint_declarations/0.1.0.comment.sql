COMMENT ON FUNCTION syncular._checkpoint_declarations(jsonb) IS
'Internal. Validates checkpoint declarations (RFC 0007 §3.1): NULL / JSON null = none; otherwise a JSON array of '
'objects {partition: non-empty string, name: non-empty string, schemaVersion: integer 1..2^31-1} (other members '
'ignored). Returns one row per declaration in array order. Bad shape -> sync.storage.invalid_checkpoints '
'(SQLSTATE 22023) with details {reason:"not_array"} or {index (0-based), reason:"not_object"} or {index, field}.';
