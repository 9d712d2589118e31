COMMENT ON FUNCTION syncular._compact_json(jsonb) IS
  'Internal. The compact JSON text of j: jsonb''s rendering (object keys in jsonb order, numbers as stored) with no whitespace outside strings, e.g. {"a":[1,"x, y"]}. Used for the byte limits of reaction payloads (push-and-pull.md §2.8) and rejection details (§2.4). NULL for NULL; raises nothing.';
