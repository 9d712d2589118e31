COMMENT ON FUNCTION syncular._check_identifier(text, text, text, jsonb) IS
  'Internal. Checks one table, column or index name: non-empty, <= 63 UTF-8 bytes, no sync_ or _sync prefix (case-sensitive, as the reference). Raises sync.storage.schema_invalid (22023) with rule identifier_empty | identifier_too_long | identifier_reserved. data-model-and-storage.md §2.2.';
