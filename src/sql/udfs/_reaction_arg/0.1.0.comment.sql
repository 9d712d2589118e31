COMMENT ON FUNCTION syncular._reaction_arg(text, bigint, bigint, bigint) IS
  'Internal. Returns value when lo <= value <= hi; raises sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) when it is NULL or outside the range.';
