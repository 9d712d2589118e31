COMMENT ON FUNCTION syncular._check_stored_layout(jsonb) IS
  'Internal. syncular._verify_stored_layouts of a compiled schema against the layouts stored in sync_schema_meta now (absent marker = {}). Raises sync.storage.stored_layout_mismatch (SQLSTATE 55000; details {table, column} | {table}). Writes nothing. barrier-rfc0007.md §6.1.';
