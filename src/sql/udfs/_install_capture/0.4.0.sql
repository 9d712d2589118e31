CREATE FUNCTION syncular._install_capture(app_schema text, tbl text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE TRIGGER zz_syncular_capture BEFORE INSERT OR UPDATE ON %I.%I '
                 'FOR EACH ROW EXECUTE FUNCTION syncular._capture_row(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_insert AFTER INSERT ON %I.%I '
                 'REFERENCING NEW TABLE AS sync_new FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_update AFTER UPDATE ON %I.%I '
                 'REFERENCING OLD TABLE AS sync_old NEW TABLE AS sync_new FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_delete AFTER DELETE ON %I.%I '
                 'REFERENCING OLD TABLE AS sync_old FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_truncate BEFORE TRUNCATE ON %I.%I '
                 'FOR EACH STATEMENT EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
END
$$;
