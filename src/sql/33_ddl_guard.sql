-- syncular install script, part 33: DDL on a synced table outside ensure_schema is refused
-- (src/ddl_guard.c; docs/writing-with-sql.md).  The layout of a synced table is the compiled
-- schema's (data-model-and-storage.md §6) and changes only through ensure_schema's append-only
-- bump (§7), which marks its own DDL with syncular._synced_ddl; a superuser repairing by hand
-- sets syncular.allow_synced_table_ddl.  The event triggers are members of the extension: they
-- come with CREATE EXTENSION (also in a database pg_restore fills; pg_dump does not dump them)
-- and go with DROP EXTENSION.

CREATE FUNCTION syncular._guard_synced_ddl() RETURNS event_trigger
  AS 'MODULE_PATHNAME', 'syncular_guard_synced_ddl' LANGUAGE C;
COMMENT ON FUNCTION syncular._guard_synced_ddl() IS
  'Internal. The function of the event triggers syncular_guard_alter (ddl_command_start, ALTER TABLE: ADD / DROP COLUMN, ALTER COLUMN TYPE, SET / DROP NOT NULL, RENAME of the table or a column, SET SCHEMA, DISABLE TRIGGER ALL / USER / of a capture trigger; ALTER TRIGGER: RENAME of a capture trigger) and syncular_guard_drop (sql_drop: a synced table, or one of its capture triggers, dropped by DROP TABLE, DROP TRIGGER, DROP SCHEMA ... CASCADE, DROP OWNED) on a synced table of the registered schema. Refuses with sync.storage.physical_layout_mismatch (SQLSTATE 55000; details {table, command, reason: "ddl_outside_ensure_schema"}) and a HINT (change the schema IR and call ensure_schema). Passes inside ensure_schema''s bump (syncular._synced_ddl) and when the superuser setting syncular.allow_synced_table_ddl is on. data-model-and-storage.md §6, §7; docs/writing-with-sql.md.';

CREATE FUNCTION syncular._synced_ddl(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_synced_ddl' LANGUAGE C STRICT;
COMMENT ON FUNCTION syncular._synced_ddl(boolean) IS
  'Internal. on = true: this backend''s DDL on synced tables passes the guard of syncular._guard_synced_ddl until _synced_ddl(false), the end of the transaction, or the rollback of the subtransaction that set it; ensure_schema''s bump sets it around its ALTER TABLE and DROP TABLE. No grant: superuser / extension owner only. Raises nothing.';

-- what the guard reads, as the extension owner (the role running the DDL needs no privilege on
-- syncular.*; ddl_guard.c calls these through fmgr, without an ACL check)
CREATE FUNCTION syncular._synced_table_of(relid oid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM syncular.sync_settings s, jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1 AND to_regclass(format('%I.%I', s.app_schema, t ->> 'name'))::oid = relid
                    LIMIT 1), '')
$$;
COMMENT ON FUNCTION syncular._synced_table_of(oid) IS
  'Internal. The name of the synced table of the registered schema whose relation is relid, or '''' when it is none (no registration, another table). Read by the synced-table DDL guard. Raises nothing.';

CREATE FUNCTION syncular._synced_table_dropped() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM pg_event_trigger_dropped_objects() d, syncular.sync_settings s,
                          jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1
                      AND ((d.object_type = 'table' AND d.schema_name = s.app_schema
                            AND d.object_name = t ->> 'name')
                           OR (d.object_type = 'trigger' AND d.address_names[1] = s.app_schema
                               AND d.address_names[2] = t ->> 'name'
                               AND d.address_names[3] IN ('zz_syncular_capture', 'syncular_capture_insert',
                                   'syncular_capture_update', 'syncular_capture_delete',
                                   'syncular_capture_truncate')))
                    ORDER BY 1 LIMIT 1), '')
$$;
COMMENT ON FUNCTION syncular._synced_table_dropped() IS
  'Internal. In a sql_drop event trigger: the first (by name) synced table of the registered schema among the dropped objects, or whose capture trigger is among them, or '''' when none is. Read by the synced-table DDL guard. Raises the PostgreSQL error when called outside a sql_drop event trigger.';

REVOKE ALL ON FUNCTION syncular._guard_synced_ddl() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_ddl(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_of(oid) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER syncular_guard_alter ON ddl_command_start WHEN TAG IN ('ALTER TABLE', 'ALTER TRIGGER')
  EXECUTE FUNCTION syncular._guard_synced_ddl();
COMMENT ON EVENT TRIGGER syncular_guard_alter IS
  'Refuses ALTER TABLE / ALTER TRIGGER that changes a synced table''s layout (columns, name, schema, capture triggers) outside ensure_schema (syncular._guard_synced_ddl).';
CREATE EVENT TRIGGER syncular_guard_drop ON sql_drop
  EXECUTE FUNCTION syncular._guard_synced_ddl();
COMMENT ON EVENT TRIGGER syncular_guard_drop IS
  'Refuses dropping a synced table or its capture triggers outside ensure_schema and unregister_schema (syncular._guard_synced_ddl).';
