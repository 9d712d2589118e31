COMMENT ON FUNCTION syncular._layout_entry_equal(jsonb, jsonb) IS
  'Internal. True when two layout entries have equal name, type and nullable; false when either is NULL. Raises nothing.';
