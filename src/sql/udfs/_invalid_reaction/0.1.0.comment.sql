COMMENT ON FUNCTION syncular._invalid_reaction(integer, text, text, jsonb) IS
  'Internal. Always raises sync.storage.invalid_reaction (SQLSTATE 22023), message "invalid reaction record", details {index?, field, reason} || extra.';
