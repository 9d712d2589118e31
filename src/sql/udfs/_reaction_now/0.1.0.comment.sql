COMMENT ON FUNCTION syncular._reaction_now(bigint) IS
  'Internal. now_ms when not NULL, else the wall clock (clock_timestamp()) in Unix epoch milliseconds, truncated. Raises nothing.';
