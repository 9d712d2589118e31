-- RFC 0007 serve gate and readiness (src/sql/60_barrier.sql;
-- shared/reference/barrier-rfc0007.md §4, §7).
-- pg_regress runs every test of a run in one database: this test uses a database of its own
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_barrier_gate;
CREATE DATABASE syncular_t_barrier_gate;
\c syncular_t_barrier_gate
\i sql/test_helpers.psql
-- load the module first, so its GUCs (syncular.checkpoints) are defined before any SET
SELECT count(*) > 0 AS module_loaded FROM syncular.error_catalog();
-- the setting is defined by the module (no missing_ok here), empty by default
SELECT current_setting('syncular.checkpoints') = '' AS empty_by_default;

-- ---------------------------------------------------------------- serve_gate: the read
-- no schema registered and no running version given: a host error, not a state
SELECT pg_temp.err($$SELECT syncular.serve_gate('p')$$);
-- an explicit running version on an empty database: stored 0, no epoch, nothing pending
SELECT syncular.serve_gate('p', '[]', 1);
-- the running version defaults to the registered compiled schema
INSERT INTO syncular.sync_settings (id, app_schema, compiled)
VALUES (1, 'public', '{"version": 2, "appSchema": "public", "tables": []}');
SELECT syncular.serve_gate('p');
-- the marker and the partition's log epoch (another partition's epoch is not read)
INSERT INTO syncular.sync_schema_meta (id, schema_version, layouts) VALUES (1, 2, '{}');
INSERT INTO syncular.sync_partition_registry VALUES ('p', 'epoch-p', false, 0), ('q', 'epoch-q', false, 0);
SELECT syncular.serve_gate('p');

-- pending = schema_version = running and not activated, ALL partitions, ordered by
-- (partition, name) in byte order ("B" < "a"), whatever the insertion order
INSERT INTO syncular.sync_backfill_checkpoints (partition, name, schema_version, state, updated_at_ms) VALUES
  ('b', 'z', 2, 'declared', 0),
  ('a', 'y', 2, 'backfilling', 0),
  ('a', 'x', 2, 'declared', 0),
  ('B', 'w', 2, 'declared', 0),
  ('a', 'done', 2, 'activated', 0),
  ('a', 'old', 1, 'declared', 0),
  ('c', 'next', 3, 'declared', 0);
SELECT jsonb_pretty(syncular.serve_gate('p'));
-- the refusal details, exactly (key order partition, projection)
SELECT (syncular.serve_gate('p') -> 'refusal' -> 'details')::text AS details;
-- the first pending entry not covered, in (partition, name) order
SELECT (syncular.serve_gate('p', '[{"partition": "B", "name": "w", "schemaVersion": 2}]')
        -> 'refusal' -> 'details')::text AS after_bw;
-- matching is on partition + name only: a different schemaVersion still covers
SELECT (syncular.serve_gate('p', '[{"partition": "B", "name": "w", "schemaVersion": 99},
                                   {"partition": "a", "name": "x", "schemaVersion": 1}]')
        -> 'refusal' -> 'details')::text AS after_bw_ax;
-- ... but the partition and the name must both match
SELECT (syncular.serve_gate('p', '[{"partition": "a", "name": "w", "schemaVersion": 2},
                                   {"partition": "B", "name": "x", "schemaVersion": 2},
                                   {"partition": "b", "name": "W", "schemaVersion": 2}]')
        -> 'refusal' -> 'details')::text AS crossed;
-- every pending one declared (extra declarations are harmless): ready, pending still reported
SELECT syncular.serve_gate('q', '[{"partition": "b", "name": "z", "schemaVersion": 2},
                                  {"partition": "a", "name": "y", "schemaVersion": 2},
                                  {"partition": "zz", "name": "unused", "schemaVersion": 2},
                                  {"partition": "a", "name": "x", "schemaVersion": 2},
                                  {"partition": "B", "name": "w", "schemaVersion": 2}]');
-- a request partition with no registry row: logEpoch null; the pending list is the same
SELECT syncular.serve_gate('nobody') -> 'logEpoch' AS no_epoch,
       syncular.serve_gate('nobody') -> 'refusal' -> 'details' AS same_refusal;
-- another running version sees only its own checkpoints
SELECT syncular.serve_gate('p', '[]', 3) -> 'pending' AS pending_v3,
       (syncular.serve_gate('p', '[]', 3) -> 'refusal' -> 'details')::text AS refusal_v3;
SELECT syncular.serve_gate('p', '[]', 1) -> 'pending' AS pending_v1;

-- schema kind: a stored version above the running one is refused first, even when every
-- checkpoint is declared; a stored version below it is not a refusal
UPDATE syncular.sync_schema_meta SET schema_version = 3;
SELECT jsonb_pretty(syncular.serve_gate('p', '[{"partition": "b", "name": "z", "schemaVersion": 2},
                                                {"partition": "a", "name": "y", "schemaVersion": 2},
                                                {"partition": "a", "name": "x", "schemaVersion": 2},
                                                {"partition": "B", "name": "w", "schemaVersion": 2}]'));
SELECT (syncular.serve_gate('p') -> 'refusal' -> 'details')::text AS schema_details;
SELECT syncular.serve_gate('p', '[]', 4) - 'pending' AS stored_below_running;
UPDATE syncular.sync_schema_meta SET schema_version = 2;

-- declarations must be well formed
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '{"partition": "a"}')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[1]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"name": "x", "schemaVersion": 2}]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"partition": "a", "name": "", "schemaVersion": 2}]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"partition": "a", "name": "x", "schemaVersion": "2"}]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"partition": "a", "name": "x", "schemaVersion": 1.5}]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"partition": "a", "name": "x", "schemaVersion": 0}]')$$);
SELECT pg_temp.err($$SELECT syncular.serve_gate('p', '[{"partition": "a", "name": "x", "schemaVersion": 2}, {"partition": 7, "name": "x", "schemaVersion": 2}]')$$);
-- NULL and JSON null declare nothing
SELECT syncular.serve_gate('p', NULL) -> 'refusal' -> 'details' AS null_decl,
       syncular.serve_gate('p', 'null') -> 'refusal' -> 'details' AS json_null_decl;

-- ---------------------------------------------------------------- _serve_gate_check (engine form)
-- no declarations set: refused with the catalogue error
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
-- declarations from the GUC, as a gateway sets them
SET syncular.checkpoints = '[{"partition": "B", "name": "w", "schemaVersion": 2},
                             {"partition": "a", "name": "x", "schemaVersion": 2},
                             {"partition": "a", "name": "y", "schemaVersion": 2}]';
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
SET syncular.checkpoints = '[{"partition": "B", "name": "w", "schemaVersion": 2},
                             {"partition": "a", "name": "x", "schemaVersion": 2},
                             {"partition": "a", "name": "y", "schemaVersion": 2},
                             {"partition": "b", "name": "z", "schemaVersion": 2}]';
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
-- the schema kind through the check
UPDATE syncular.sync_schema_meta SET schema_version = 3;
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
UPDATE syncular.sync_schema_meta SET schema_version = 2;
-- empty = none
SET syncular.checkpoints = '';
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
-- a bad setting is a host error
SET syncular.checkpoints = 'not json';
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
SET syncular.checkpoints = '{"partition": "B"}';
SELECT pg_temp.err($$SELECT syncular._serve_gate_check('p', 2)$$);
RESET syncular.checkpoints;
-- the check writes nothing and the refusal rolls the caller back
\set VERBOSITY terse
BEGIN;
INSERT INTO syncular.sync_partitions (partition) VALUES ('p');
SELECT syncular._serve_gate_check('p', 2);
ROLLBACK;
\set VERBOSITY default
SELECT count(*) AS partitions FROM syncular.sync_partitions;

-- ---------------------------------------------------------------- readiness
-- phase backfill_checkpoint: the barrier runs first, across all partitions
SELECT jsonb_pretty(syncular.readiness());
SELECT syncular.readiness('[{"partition": "B", "name": "w", "schemaVersion": 2},
                            {"partition": "a", "name": "x", "schemaVersion": 2},
                            {"partition": "a", "name": "y", "schemaVersion": 2}]') -> 'cause' AS one_missing;
-- ready once every pending checkpoint is declared
SELECT syncular.readiness('[{"partition": "B", "name": "w", "schemaVersion": 2},
                            {"partition": "a", "name": "x", "schemaVersion": 2},
                            {"partition": "a", "name": "y", "schemaVersion": 2},
                            {"partition": "b", "name": "z", "schemaVersion": 2}]') AS declared_all;
-- ... or once they are activated
UPDATE syncular.sync_backfill_checkpoints SET state = 'activated' WHERE schema_version = 2;
SELECT syncular.readiness() AS activated_all;
-- phase storage_migration: stored newer, stored older / absent, stored layouts, physical layout
UPDATE syncular.sync_schema_meta SET schema_version = 3;
SELECT syncular.readiness();
UPDATE syncular.sync_schema_meta SET schema_version = 1;
SELECT syncular.readiness();
DELETE FROM syncular.sync_schema_meta;
SELECT syncular.readiness() -> 'cause' AS no_marker;
INSERT INTO syncular.sync_schema_meta (id, schema_version, layouts)
VALUES (1, 2, '{"ghost": [{"name": "id", "type": "string", "nullable": false}]}');
SELECT syncular.readiness();
UPDATE syncular.sync_schema_meta SET layouts = '{"todos": [{"name": "id", "type": "string", "nullable": false}]}';
UPDATE syncular.sync_settings SET compiled = '{"version": 2, "appSchema": "public", "tables": [{"name": "todos",
  "materialize": true, "primaryKey": "id", "pkIndex": 0,
  "columns": [{"name": "id", "type": "string", "nullable": false, "crdtType": null, "encrypted": false}],
  "scopes": [], "indexes": [], "references": []}]}';
SELECT syncular.readiness();
-- the barrier still comes before the marker: a pending checkpoint wins over a newer marker
UPDATE syncular.sync_schema_meta SET schema_version = 3;
INSERT INTO syncular.sync_backfill_checkpoints (partition, name, schema_version, state, updated_at_ms)
VALUES ('elsewhere', 'late', 2, 'declared', 0);
SELECT syncular.readiness() - 'cause' AS barrier_first;
-- phase schema_compile: nothing registered
DELETE FROM syncular.sync_settings;
SELECT syncular.readiness();
-- a bad declaration list is a caller error
SELECT pg_temp.err($$SELECT syncular.readiness('"x"')$$);

\c :regress_db
DROP DATABASE syncular_t_barrier_gate;
