-- syncular install script, part 32: ordinary SQL writes to synced tables are sync commits
-- (docs/writing-with-sql.md).  ensure_schema installs these triggers on every synced table:
--   zz_syncular_capture       BEFORE INSERT OR UPDATE FOR EACH ROW: the row's _sync_* columns
--                             from its columns (named to sort after the app's BEFORE ROW
--                             triggers, which fire in name order, so it encodes what they leave)
--   syncular_capture_insert   AFTER INSERT FOR EACH STATEMENT, REFERENCING NEW TABLE
--   syncular_capture_update   AFTER UPDATE FOR EACH STATEMENT, REFERENCING OLD TABLE, NEW TABLE
--   syncular_capture_delete   AFTER DELETE FOR EACH STATEMENT, REFERENCING OLD TABLE
--   syncular_capture_truncate BEFORE TRUNCATE FOR EACH STATEMENT (the rows are logged as deletes)
-- MERGE fires the INSERT / UPDATE / DELETE triggers of its actions, COPY FROM the INSERT ones.

-- A role that may write the synced table needs no privilege on the sync_* tables: the log is
-- written by the SECURITY DEFINER statement trigger as the extension owner (the actor defaults
-- to the session's role); the row trigger reads the settings once per statement as the owner of
-- its function, without switching roles for every row.
CREATE FUNCTION syncular._capture_row() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_row' LANGUAGE C;
COMMENT ON FUNCTION syncular._capture_row() IS
  'Internal. BEFORE INSERT OR UPDATE row trigger of a synced table (argument: the table name): sets _sync_partition (the row''s value, else the setting syncular.partition), _sync_row_id (the primary key, WF §4.5), _sync_payload (the full row encoded from the columns; an UPDATE keeps the payload value of a column whose datum did not change), _sync_server_version (1, or stored + 1), _sync_column_versions (changed columns at the new version) and _sync_scopes. Errors: sync.invalid_request (SQLSTATE 22023; details {table, column?, reason}: partition_missing with a HINT naming syncular.partition, partition_invalid, integer_out_of_range, null_value, unencodable_value, value_too_large, key_too_large, missing_scope, payload_missing, payload_invalid); sync.storage.physical_layout_mismatch (55000) when a column is missing or retyped; sync.storage.schema_not_registered (55000). data-model-and-storage.md §1, §6; push-and-pull.md §2.3.';

CREATE FUNCTION syncular._capture_log() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_log' LANGUAGE C
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION syncular._capture_log() IS
  'Internal. AFTER INSERT / UPDATE / DELETE statement trigger (transition tables sync_new, sync_old) and BEFORE TRUNCATE trigger of a synced table (argument: the table name): appends the statement''s rows to the transaction''s commit of each partition, created on the first write (partition row locked, in byte order within a statement; RFC 0007 serve gate; next commit_seq; sync_commits with client_id = syncular.client_id, client_commit_id xid:<top xid>, actor_id = syncular.actor_id or the session''s role (SET ROLE respected); commit wake-up at commit): delete changes with tombstones for rows gone, delete changes with the old scopes for rows moved out of them, upsert changes, scope index, row-scope index, blob references. Errors: sync.schema_not_ready (55000) from the serve gate, sync.storage.writer_fence_rejected (P0001) from the writer fence, sync.storage.schema_not_registered (55000). push-and-pull.md §2.5, §4.1; barrier-rfc0007.md §4.4.';

CREATE FUNCTION syncular._capture_bypass(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_capture_bypass' LANGUAGE C STRICT;
COMMENT ON FUNCTION syncular._capture_bypass(boolean) IS
  'Internal. on = true: the capture triggers skip this backend''s writes until _capture_bypass(false), the end of the transaction, or the rollback of the subtransaction that set it; used by the schema bump''s row rewrite (engine writes are not captured twice). No grant: superuser / extension owner only. Raises nothing.';

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
COMMENT ON FUNCTION syncular._install_capture(text, text) IS
  'Internal. Creates (or replaces) the five capture triggers on app_schema.tbl: zz_syncular_capture (BEFORE INSERT OR UPDATE, row), syncular_capture_insert / _update / _delete (AFTER, statement, transition tables sync_new / sync_old) and syncular_capture_truncate (BEFORE TRUNCATE). Called by ensure_schema for every synced table. Raises the DDL error when the table is missing. docs/writing-with-sql.md.';

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
COMMENT ON FUNCTION syncular._drop_capture(text, text) IS
  'Internal. Drops the capture triggers of app_schema.tbl (unregister_schema keeps a synced table as a plain table without them). Raises the DDL error when the table is missing.';

REVOKE ALL ON FUNCTION syncular._capture_row() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_log() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_bypass(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._install_capture(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._drop_capture(text, text) FROM PUBLIC;

-- No silent divergence: a re-opening ensure_schema (same version) refuses while a synced table
-- lacks its capture triggers or has them disabled, and says what to do about the rows written
-- meanwhile.
CREATE FUNCTION syncular._check_capture(compiled jsonb) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t       jsonb;
  app     text := compiled ->> 'appSchema';
  missing text[];
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') LOOP
    SELECT array_agg(n ORDER BY n) INTO missing
      FROM unnest(ARRAY['zz_syncular_capture', 'syncular_capture_insert', 'syncular_capture_update',
                        'syncular_capture_delete', 'syncular_capture_truncate']) AS n
     WHERE NOT EXISTS (SELECT 1 FROM pg_trigger g
                        WHERE g.tgrelid = format('%I.%I', app, t ->> 'name')::regclass
                          AND g.tgname = n AND g.tgenabled IN ('O', 'A'));
    IF missing IS NOT NULL THEN
      PERFORM syncular._raise('sync.storage.physical_layout_mismatch',
        'a synced table lacks its capture triggers (dropped or disabled)',
        jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                           'reason', 'capture_triggers_missing', 'triggers', to_jsonb(missing)),
        format('Rows written to %I.%I while they were missing never reached clients. Restore them '
               '(ALTER TABLE %I.%I ENABLE TRIGGER ALL, or SELECT syncular._install_capture(%L, %L) as '
               'the extension owner), then SELECT syncular.rotate_log_epoch(partition) for every '
               'partition written meanwhile, so its clients bootstrap again.',
               app, t ->> 'name', app, t ->> 'name', app, t ->> 'name'));
    END IF;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._check_capture(jsonb) IS
  'Internal. For every table of the compiled schema: the five capture triggers exist and are enabled (tgenabled O or A); else raises sync.storage.physical_layout_mismatch (SQLSTATE 55000; details {phase: "storage_migration", table, reason: "capture_triggers_missing", triggers: [names]}) with a HINT: restore them, then rotate_log_epoch for the partitions written meanwhile. Called by ensure_schema when it re-opens the registered version. docs/writing-with-sql.md.';
REVOKE ALL ON FUNCTION syncular._check_capture(jsonb) FROM PUBLIC;
