COMMENT ON FUNCTION syncular._reaction_now(bigint) IS
  'Internal. now_ms when not NULL, else the engine''s clock (syncular.now_ms(): the wall clock unless syncular.clock_override_ms / clock_offset_ms move it) in Unix epoch milliseconds. Raises nothing.';
