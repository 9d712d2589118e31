COMMENT ON FUNCTION syncular._jstr(jsonb, text) IS
  'Internal. The JSON-string member `key` of object `j`, or NULL when it is absent or not a string. Raises nothing.';
