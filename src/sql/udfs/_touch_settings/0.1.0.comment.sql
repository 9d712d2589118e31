COMMENT ON FUNCTION syncular._touch_settings() IS
  'Internal. Writes a new version of the syncular.sync_settings singleton (created when absent) without changing it, so that the C engine''s per-backend cache, keyed by the row''s xmin/ctid (src/schema.c), reloads the hooks. Raises nothing.';
