COMMENT ON EVENT TRIGGER syncular_guard_alter IS
  'Refuses ALTER TABLE / ALTER TRIGGER that changes a synced table''s layout (columns, name, schema, capture triggers) outside ensure_schema (syncular._guard_synced_ddl).';
