COMMENT ON FUNCTION syncular._checkpoint_args(text, text) IS
'Internal. Raises sync.storage.invalid_checkpoints (SQLSTATE 22023, details {field}) when partition or name is '
'NULL or empty.';
