COMMENT ON FUNCTION syncular._ensure_schema(jsonb, jsonb, text, text) IS
  'Internal body of syncular.ensure_schema; caller_schema is the caller''s current_schema(). See syncular.ensure_schema.';
