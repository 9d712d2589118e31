COMMENT ON FUNCTION syncular._layouts_text(jsonb) IS
  'Internal. The sync_schema_meta.layouts text of a compiled schema: a compact JSON object, table -> [{name, type, nullable}] in compiled table and column order, nothing else. Raises nothing. data-model-and-storage.md §4 (sync_schema_meta).';
