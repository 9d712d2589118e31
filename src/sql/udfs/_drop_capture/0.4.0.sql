CREATE FUNCTION syncular._drop_capture(app_schema text, tbl text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS zz_syncular_capture ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_insert ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_update ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_delete ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_truncate ON %I.%I', app_schema, tbl);
END
$$;
