COMMENT ON FUNCTION syncular._schema_change_hint() IS
  'Internal. The errhint text of sync.storage.stored_layout_mismatch and sync.storage.schema_not_append_only raised by ensure_schema: how to change a registered schema (an append-only version bump) or discard it (syncular.unregister_schema).';
