COMMENT ON FUNCTION syncular._pg_type(text) IS
  'Internal. PostgreSQL projection type of a schema column type: string/blob_ref -> text, integer -> bigint, float -> double precision, boolean -> boolean, json -> jsonb, bytes/crdt -> bytea; NULL for an unknown type. data-model-and-storage.md §6.';
