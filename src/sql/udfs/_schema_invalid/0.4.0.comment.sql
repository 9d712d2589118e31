COMMENT ON FUNCTION syncular._schema_invalid(text, text, text, text, jsonb) IS
  'Internal. Always raises sync.storage.schema_invalid (SQLSTATE 22023) with the fixed `message` and details {table?, column?, ...extra, rule}; rule column_type adds a HINT listing the valid column types. data-model-and-storage.md §2.';
