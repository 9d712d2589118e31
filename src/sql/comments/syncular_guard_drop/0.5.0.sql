COMMENT ON EVENT TRIGGER syncular_guard_drop IS
  'Refuses dropping a synced table or its capture triggers outside ensure_schema and unregister_schema (syncular._guard_synced_ddl).';
