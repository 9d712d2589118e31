COMMENT ON FUNCTION syncular._reaction_int(jsonb, bigint, bigint) IS
  'Internal. The integer value of v when v is a JSON number with an integral value in lo..hi (1.0 counts as 1), else NULL. Raises nothing.';
