COMMENT ON FUNCTION syncular._drop_capture(text, text) IS
  'Internal. Drops the capture triggers of app_schema.tbl (unregister_schema keeps a synced table as a plain table without them). Raises the DDL error when the table is missing.';
