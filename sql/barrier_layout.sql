-- Same-version physical layout check (syncular._check_physical_layout, src/sql/60_barrier.sql;
-- shared/reference/barrier-rfc0007.md §6.2).  The synced tables are created by hand with the
-- reference DDL (data-model-and-storage.md §6) for a compiled schema written directly into
-- sync_settings; each tampering runs in a transaction that is rolled back.
-- pg_regress runs every test of a run in one database: this test uses a database of its own
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_barrier_layout;
CREATE DATABASE syncular_t_barrier_layout;
\c syncular_t_barrier_layout
\i sql/test_helpers.psql
CREATE FUNCTION pg_temp.check() RETURNS text LANGUAGE sql AS $$
  SELECT pg_temp.err($q$SELECT syncular._check_physical_layout(
    (SELECT compiled FROM syncular.sync_settings WHERE id = 1))$q$)
$$;

-- a mixed-case app schema holding a materialized table and a mixed-case, non-materialized one
CREATE SCHEMA "AppData";
INSERT INTO syncular.sync_settings (id, app_schema, compiled) VALUES (1, 'AppData', $json$
{"version": 3, "appSchema": "AppData", "tables": [
  {"name": "todos", "materialize": true, "primaryKey": "id", "pkIndex": 0,
   "columns": [{"name": "id", "type": "string", "nullable": false, "crdtType": null, "encrypted": false},
               {"name": "title", "type": "string", "nullable": true, "crdtType": null, "encrypted": false},
               {"name": "done", "type": "boolean", "nullable": false, "crdtType": null, "encrypted": false},
               {"name": "list_id", "type": "string", "nullable": false, "crdtType": null, "encrypted": false}],
   "scopes": [{"pattern": "list:{list_id}", "prefix": "list", "variable": "list_id", "column": "list_id",
               "columnIndex": 3}],
   "indexes": [], "references": []},
  {"name": "TaskLists", "materialize": false, "primaryKey": "id", "pkIndex": 0,
   "columns": [{"name": "id", "type": "string", "nullable": false, "crdtType": null, "encrypted": false},
               {"name": "Owner", "type": "string", "nullable": false, "crdtType": null, "encrypted": false}],
   "scopes": [{"pattern": "owner:{Owner}", "prefix": "owner", "variable": "Owner", "column": "Owner",
               "columnIndex": 1}],
   "indexes": [], "references": []}
]}
$json$);

CREATE TABLE "AppData"."todos" (
  _sync_partition TEXT NOT NULL,
  _sync_row_id TEXT NOT NULL,
  "id" TEXT NOT NULL,
  "title" TEXT,
  "done" BOOLEAN NOT NULL,
  "list_id" TEXT NOT NULL,
  _sync_server_version BIGINT NOT NULL,
  _sync_scopes JSONB NOT NULL,
  _sync_payload BYTEA NOT NULL,
  _sync_column_versions BYTEA,
  PRIMARY KEY (_sync_partition, _sync_row_id)
);
CREATE TABLE "AppData"."TaskLists" (
  _sync_partition TEXT NOT NULL,
  _sync_row_id TEXT NOT NULL,
  _sync_server_version BIGINT NOT NULL,
  _sync_scopes JSONB NOT NULL,
  _sync_payload BYTEA NOT NULL,
  _sync_column_versions BYTEA,
  PRIMARY KEY (_sync_partition, _sync_row_id)
);
-- a decoy that a case-folding lookup would find instead, with a broken layout
CREATE SCHEMA appdata;
CREATE TABLE appdata.tasklists (_sync_partition TEXT, _sync_row_id TEXT);

-- the reference layout passes, mixed-case names included
SELECT pg_temp.check() AS reference_layout;

-- every tampering below is hand-made DDL on synced tables, which the DDL guard refuses
-- (src/ddl_guard.c, sql/capture_ddl_guard.sql): done anyway with the superuser escape hatch, it
-- is what this check must detect
SET syncular.allow_synced_table_ddl = on;

-- extra non-PK columns are allowed
BEGIN;
ALTER TABLE "AppData"."todos" ADD COLUMN note TEXT;
ALTER TABLE "AppData"."TaskLists" ADD COLUMN "Extra" JSONB NOT NULL DEFAULT '{}';
SELECT pg_temp.check() AS extra_columns;
ROLLBACK;
-- app column types and nullability are not checked (the stored layouts cover them)
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN title TYPE INTEGER USING NULL, ALTER COLUMN done DROP NOT NULL;
SELECT pg_temp.check() AS app_column_drift;
ROLLBACK;
-- an index or a unique constraint besides the PK is fine
BEGIN;
CREATE UNIQUE INDEX ON "AppData"."todos" (_sync_partition, id);
SELECT pg_temp.check() AS extra_index;
ROLLBACK;

-- 1. missing_table: the mixed-case table dropped (the decoy appdata.tasklists is not used)
BEGIN;
DROP TABLE "AppData"."TaskLists";
SELECT pg_temp.check() AS missing_table;
ROLLBACK;
-- ... and a relation without any column
BEGIN;
DROP TABLE "AppData"."TaskLists";
CREATE TABLE "AppData"."TaskLists" ();
SELECT pg_temp.check() AS no_columns;
ROLLBACK;
-- ... and the whole app schema gone
BEGIN;
SET LOCAL client_min_messages = warning;
DROP SCHEMA "AppData" CASCADE;
SELECT pg_temp.check() AS missing_schema;
ROLLBACK;

-- 2. missing_column, in table-column order: an app column comes before the later meta columns
BEGIN;
ALTER TABLE "AppData"."todos" DROP COLUMN _sync_scopes;
SELECT pg_temp.check() AS dropped_meta;
ALTER TABLE "AppData"."todos" DROP COLUMN list_id;
SELECT pg_temp.check() AS dropped_app_before_meta;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."todos" DROP COLUMN _sync_column_versions;
SELECT pg_temp.check() AS dropped_column_versions;
ROLLBACK;
-- a non-materialized table expects no app columns, but every meta column
BEGIN;
ALTER TABLE "AppData"."TaskLists" DROP COLUMN _sync_payload;
SELECT pg_temp.check() AS dropped_meta_mixed_case;
ROLLBACK;
-- a case-folded name is a different column
BEGIN;
ALTER TABLE "AppData"."todos" RENAME COLUMN title TO "Title";
SELECT pg_temp.check() AS renamed_app_column;
ROLLBACK;

-- 3. type, then nullability, of the meta columns
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_server_version TYPE INTEGER;
SELECT pg_temp.check() AS server_version_integer;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."TaskLists" ALTER COLUMN _sync_scopes TYPE JSON;
SELECT pg_temp.check() AS scopes_json;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_row_id TYPE VARCHAR(64);
SELECT pg_temp.check() AS row_id_varchar;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_payload DROP NOT NULL;
SELECT pg_temp.check() AS nullable_payload;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_column_versions SET NOT NULL;
SELECT pg_temp.check() AS not_null_column_versions;
ROLLBACK;
-- the type is reported before the nullability of the same column
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_scopes TYPE TEXT, ALTER COLUMN _sync_scopes DROP NOT NULL;
SELECT pg_temp.check() AS type_before_nullability;
ROLLBACK;
-- meta columns are checked in declaration order, whatever their physical order
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_column_versions TYPE TEXT,
                              ALTER COLUMN _sync_server_version DROP NOT NULL;
SELECT pg_temp.check() AS declaration_order;
ROLLBACK;
-- a domain over bytea is not bytea
BEGIN;
CREATE DOMAIN "AppData".payload_bytes AS BYTEA;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_payload TYPE "AppData".payload_bytes;
SELECT pg_temp.check() AS domain_type;
ROLLBACK;

-- 4. primary key = (_sync_partition, _sync_row_id), checked over every catalog column
BEGIN;
ALTER TABLE "AppData"."todos" DROP CONSTRAINT todos_pkey;
SELECT pg_temp.check() AS no_primary_key;
ALTER TABLE "AppData"."todos" ADD PRIMARY KEY (_sync_row_id, _sync_partition);
SELECT pg_temp.check() AS swapped_primary_key;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."todos" DROP CONSTRAINT todos_pkey;
ALTER TABLE "AppData"."todos" ADD PRIMARY KEY (_sync_partition, _sync_row_id, id);
SELECT pg_temp.check() AS widened_primary_key;
ROLLBACK;
BEGIN;
ALTER TABLE "AppData"."TaskLists" DROP CONSTRAINT "TaskLists_pkey";
ALTER TABLE "AppData"."TaskLists" ADD PRIMARY KEY (_sync_row_id);
SELECT pg_temp.check() AS row_id_only_primary_key;
ROLLBACK;
-- an extra column inside the primary key is refused
BEGIN;
ALTER TABLE "AppData"."TaskLists" ADD COLUMN "Extra" TEXT NOT NULL DEFAULT '';
ALTER TABLE "AppData"."TaskLists" DROP CONSTRAINT "TaskLists_pkey";
ALTER TABLE "AppData"."TaskLists" ADD PRIMARY KEY (_sync_partition, "Extra", _sync_row_id);
SELECT pg_temp.check() AS extra_in_primary_key;
ROLLBACK;
-- a unique constraint with the right columns is not a primary key
BEGIN;
ALTER TABLE "AppData"."todos" DROP CONSTRAINT todos_pkey;
ALTER TABLE "AppData"."todos" ADD UNIQUE (_sync_partition, _sync_row_id);
SELECT pg_temp.check() AS unique_instead_of_pk;
ROLLBACK;

-- a table of the compiled schema is checked after the tables before it: the first failure wins
BEGIN;
ALTER TABLE "AppData"."todos" ALTER COLUMN _sync_payload DROP NOT NULL;
DROP TABLE "AppData"."TaskLists";
SELECT pg_temp.check() AS first_table_wins;
ROLLBACK;

-- the check reads only: nothing was written
SELECT count(*) AS settings_rows FROM syncular.sync_settings;
SELECT pg_temp.check() AS still_reference;

-- readiness reports a physical mismatch at the same version as phase storage_migration
INSERT INTO syncular.sync_schema_meta (id, schema_version, layouts) VALUES (1, 3, $json$
{"todos": [{"name": "id", "type": "string", "nullable": false},
           {"name": "title", "type": "string", "nullable": true},
           {"name": "done", "type": "boolean", "nullable": false},
           {"name": "list_id", "type": "string", "nullable": false}],
 "TaskLists": [{"name": "id", "type": "string", "nullable": false},
               {"name": "Owner", "type": "string", "nullable": false}]}
$json$);
SELECT syncular.readiness() AS ready_when_matching;
BEGIN;
ALTER TABLE "AppData"."TaskLists" ALTER COLUMN _sync_server_version DROP NOT NULL;
SELECT jsonb_pretty(syncular.readiness());
ROLLBACK;

-- wired into ensure_schema: a same-version open runs the checkpoint barrier (before the marker
-- read), then the stored-layout check, then this physical check
TRUNCATE syncular.sync_schema_meta, syncular.sync_settings;
CREATE SCHEMA "Integ";
CREATE TEMP TABLE ir AS SELECT $json$
{"version": 1, "tables": [{"name": "Todos", "primaryKey": "id",
  "columns": [{"name": "id", "type": "string", "nullable": false},
              {"name": "list_id", "type": "string", "nullable": false}],
  "scopes": ["list:{list_id}"]}]}
$json$::jsonb AS ir;
SELECT syncular.ensure_schema(ir, '[{"partition": "p", "name": "c1", "schemaVersion": 1}]', 'Integ') ->> 'action'
  AS first_open FROM ir;
SELECT syncular.ensure_schema(ir, '[{"partition": "p", "name": "c1", "schemaVersion": 1}]') ->> 'action'
  AS same_version_open FROM ir;
SELECT pg_temp.err($$SELECT syncular.ensure_schema((SELECT ir FROM ir))$$) AS undeclared;
BEGIN;
ALTER TABLE "Integ"."Todos" ALTER COLUMN _sync_server_version TYPE INTEGER;
SELECT pg_temp.err($$SELECT syncular.ensure_schema((SELECT ir FROM ir),
  '[{"partition": "p", "name": "c1", "schemaVersion": 1}]')$$) AS tampered_open;
ROLLBACK;

\c :regress_db
DROP DATABASE syncular_t_barrier_layout;
