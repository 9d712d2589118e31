COMMENT ON FUNCTION syncular._create_indexes(text, jsonb) IS
  'Internal. Creates every index of syncular._index_plan(compiled) as CREATE [UNIQUE] INDEX <physical> ON app_schema.<table> (_sync_partition, <columns>). data-model-and-storage.md §6.';
