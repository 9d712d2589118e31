COMMENT ON FUNCTION syncular._retention_value(jsonb, text, bigint) IS
  'Internal. retention->key as a non-negative safe integer, or dflt when absent or null. Raises sync.storage.invalid_limit (SQLSTATE 22023; details {key, value}) otherwise.';
