-- RFC 0007 backfill checkpoints and the writer fence (src/sql/60_barrier.sql;
-- shared/reference/barrier-rfc0007.md §3, §5).
-- pg_regress runs every test of a run in one database: this test uses a database of its own
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_barrier_checkpoints;
CREATE DATABASE syncular_t_barrier_checkpoints;
\c syncular_t_barrier_checkpoints
\i sql/test_helpers.psql
-- a checkpoint row without its clock column, after checking the clock is "now" (ms)
CREATE FUNCTION pg_temp.row(j jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  IF abs((j ->> 'updatedAtMs')::bigint - floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) > 600000 THEN
    RAISE EXCEPTION 'updatedAtMs is not a current ms timestamp: %', j ->> 'updatedAtMs';
  END IF;
  RETURN j - 'updatedAtMs';
END $$;
CREATE VIEW pg_temp.cp AS
  SELECT partition, name, schema_version, state, watermark, owner_epoch, observed_rows
    FROM syncular.sync_backfill_checkpoints ORDER BY partition COLLATE "C", name COLLATE "C";
CREATE VIEW pg_temp.fence AS
  SELECT partition, required_writer_version FROM syncular.sync_writer_fence ORDER BY partition COLLATE "C";

-- ---------------------------------------------------------------- declare (install)
-- a fresh declaration: declared row, zeros, fence raised to its version
SELECT pg_temp.row(syncular.declare_checkpoint('p1', 'tasks_v2', 2));
SELECT * FROM pg_temp.fence;
-- re-declaring at a higher version leaves the row untouched but raises the fence (max)
SELECT pg_temp.row(syncular.declare_checkpoint('p1', 'tasks_v2', 3));
SELECT * FROM pg_temp.fence;
-- a declaration at a lower version never lowers the fence
SELECT pg_temp.row(syncular.declare_checkpoint('p1', 'notes_v1', 1));
SELECT * FROM pg_temp.fence;
SELECT * FROM pg_temp.cp;
-- misuse
SELECT pg_temp.err($$SELECT syncular.declare_checkpoint(NULL, 'x', 2)$$);
SELECT pg_temp.err($$SELECT syncular.declare_checkpoint('p1', '', 2)$$);
SELECT pg_temp.err($$SELECT syncular.declare_checkpoint('p1', 'x', 0)$$);
SELECT pg_temp.err($$SELECT syncular.declare_checkpoint('p1', 'x', NULL)$$);
SELECT count(*) AS rows_after_misuse FROM syncular.sync_backfill_checkpoints;

-- ---------------------------------------------------------------- claim
-- declared -> backfilling, owner epoch 1
SELECT pg_temp.row(syncular.claim_checkpoint('p1', 'tasks_v2', 2));
-- a second claim is a takeover: epoch 2, still backfilling
SELECT pg_temp.row(syncular.claim_checkpoint('p1', 'tasks_v2', 2));
-- the claim overwrites schema_version with the caller's value (reference behaviour)
SELECT pg_temp.row(syncular.claim_checkpoint('p1', 'notes_v1', 4));
-- unknown checkpoint
SELECT pg_temp.err($$SELECT syncular.claim_checkpoint('p1', 'nope', 2)$$);
SELECT pg_temp.err($$SELECT syncular.claim_checkpoint('p9', 'tasks_v2', 2)$$);

-- ---------------------------------------------------------------- advance (CAS on owner_epoch)
-- the stale owner (epoch 1) gets false and changes nothing
SELECT syncular.advance_checkpoint('p1', 'tasks_v2', 1, 99, 99) AS stale_owner_advanced;
-- an unknown checkpoint is false too, never an error
SELECT syncular.advance_checkpoint('p1', 'nope', 0, 1, 1) AS unknown_advanced;
-- the current owner (epoch 2)
SELECT syncular.advance_checkpoint('p1', 'tasks_v2', 2, 3, 40) AS owner_advanced;
SELECT * FROM pg_temp.cp WHERE name = 'tasks_v2';
SELECT pg_temp.err($$SELECT syncular.advance_checkpoint('p1', 'tasks_v2', 2, NULL, 1)$$);
-- the CAS shares the caller's transaction: rolled back with it
BEGIN;
SELECT syncular.advance_checkpoint('p1', 'tasks_v2', 2, 4, 41) AS advanced_in_tx;
ROLLBACK;
SELECT watermark, observed_rows FROM pg_temp.cp WHERE name = 'tasks_v2';

-- ---------------------------------------------------------------- activate
-- history: p1 has changes of `tasks` at seq 5 and of `notes` at seq 7 (change rows only: its
-- newest commit_seq, read from its commit rows, stays 0)
INSERT INTO syncular.sync_partitions (partition) VALUES ('p1');
INSERT INTO syncular.sync_changes (partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload)
VALUES ('p1', 5, 0, 'tasks', 't1', 1, 1, '{}', '\x00'),
       ('p1', 7, 0, 'notes', 'n1', 1, 1, '{}', '\x00');
SELECT syncular.source_coverage_seq('p1', ARRAY['tasks']) AS tasks_seq,
       syncular.source_coverage_seq('p1', ARRAY['tasks', 'notes']) AS both_seq,
       syncular.source_coverage_seq('p1', ARRAY['other']) AS other_seq,
       syncular.source_coverage_seq('p1', ARRAY[]::text[]) AS empty_seq,
       syncular.source_coverage_seq('p2', ARRAY['tasks']) AS other_partition_seq;
-- a source change above the watermark: stale, nothing written
SELECT syncular.activate_checkpoint('p1', 'tasks_v2', 2, 4, ARRAY['tasks']) AS changed_above;
SELECT * FROM pg_temp.cp WHERE name = 'tasks_v2';
-- the stale owner with a clean watermark: stale, nothing written
SELECT syncular.activate_checkpoint('p1', 'tasks_v2', 1, 5, ARRAY['tasks']) AS stale_owner;
SELECT * FROM pg_temp.cp WHERE name = 'tasks_v2';
-- a change of another table (notes, seq 7 > 5) does not count
SELECT syncular.activate_checkpoint('p1', 'tasks_v2', 2, 5, ARRAY['tasks']) AS owner_activates;
SELECT * FROM pg_temp.cp WHERE name = 'tasks_v2';
-- activated is terminal: activating again is stale, claiming it is not_declared
SELECT syncular.activate_checkpoint('p1', 'tasks_v2', 2, 5, ARRAY['tasks']) AS again;
SELECT pg_temp.err($$SELECT syncular.claim_checkpoint('p1', 'tasks_v2', 2)$$);
-- re-declaring an activated checkpoint returns it activated and untouched
SELECT pg_temp.row(syncular.declare_checkpoint('p1', 'tasks_v2', 2));
-- the CAS does not check the state: the owner still moves the watermark (reference behaviour)
SELECT syncular.advance_checkpoint('p1', 'tasks_v2', 2, 6, 50) AS advance_after_activation;
SELECT * FROM pg_temp.cp WHERE name = 'tasks_v2';

-- pruned past the watermark: unverifiable, never clean; nothing written
SELECT pg_temp.row(syncular.declare_checkpoint('p2', 'proj', 2));
INSERT INTO syncular.sync_partitions (partition, horizon_seq) VALUES ('p2', 10);
SELECT syncular.activate_checkpoint('p2', 'proj', 0, 9, ARRAY['tasks']) AS pruned_past_watermark;
SELECT * FROM pg_temp.cp WHERE partition = 'p2';
-- an empty source list is clean whatever the horizon; owner 0 activates a never-claimed row
BEGIN;
SELECT syncular.activate_checkpoint('p2', 'proj', 0, 9, ARRAY[]::text[]) AS empty_sources;
ROLLBACK;
-- horizon equal to the watermark is clean; owner 0 on the never-claimed (declared) row activates
SELECT syncular.activate_checkpoint('p2', 'proj', 0, 10, ARRAY['tasks']) AS horizon_equal;
SELECT * FROM pg_temp.cp WHERE partition = 'p2';

-- the fence must cover the checkpoint's version
SELECT pg_temp.row(syncular.declare_checkpoint('p3', 'f', 5));
UPDATE syncular.sync_writer_fence SET required_writer_version = 4 WHERE partition = 'p3';
SELECT pg_temp.err($$SELECT syncular.activate_checkpoint('p3', 'f', 0, 0, ARRAY[]::text[])$$);
DELETE FROM syncular.sync_writer_fence WHERE partition = 'p3';
SELECT pg_temp.err($$SELECT syncular.activate_checkpoint('p3', 'f', 0, 0, ARRAY[]::text[])$$);
-- an unknown checkpoint fails the same check
SELECT pg_temp.err($$SELECT syncular.activate_checkpoint('p1', 'nope', 0, 0, ARRAY[]::text[])$$);
SELECT pg_temp.err($$SELECT syncular.activate_checkpoint('p1', 'tasks_v2', 2, NULL, ARRAY[]::text[])$$);
SELECT * FROM pg_temp.cp WHERE partition = 'p3';
-- p3 has no partition row yet (the refused activations rolled back)
SELECT partition, max_commit_seq, horizon_seq FROM syncular.partitions ORDER BY partition;
-- a fence raised again (max) lets it activate
SELECT pg_temp.row(syncular.declare_checkpoint('p3', 'f', 5));
SELECT syncular.activate_checkpoint('p3', 'f', 0, 0, ARRAY[]::text[]) AS fenced_again;
-- activation created the partition row it locks
SELECT partition, max_commit_seq, horizon_seq FROM syncular.partitions ORDER BY partition;

-- ---------------------------------------------------------------- listing
SELECT pg_temp.row(c) FROM syncular.checkpoints('p1') c;
SELECT count(*) AS none FROM syncular.checkpoints('nobody');

-- ---------------------------------------------------------------- the fence at work (trigger)
SELECT * FROM pg_temp.fence;
-- below the fence, or NULL: refused
SELECT pg_temp.err($$INSERT INTO syncular.sync_commits VALUES ('p1', 8, 'c', 'k1', 'a', 0, 2)$$);
SELECT pg_temp.err($$INSERT INTO syncular.sync_commits VALUES ('p1', 8, 'c', 'k1', 'a', 0, NULL)$$);
-- at the fence: accepted; another partition without a fence accepts NULL
SELECT pg_temp.err($$INSERT INTO syncular.sync_commits VALUES ('p1', 8, 'c', 'k1', 'a', 0, 3)$$);
SELECT pg_temp.err($$INSERT INTO syncular.sync_commits VALUES ('free', 1, 'c', 'k1', 'a', 0, NULL)$$);
SELECT partition, commit_seq, writer_version FROM syncular.sync_commits ORDER BY 1, 2;

-- ---------------------------------------------------------------- the bump hook
-- partitions known: p1 (fence 3), p2 (fence 2), p3 (fence 5); p4 gets a row and no fence;
-- p5 has a fence of 9 and no partition row.
INSERT INTO syncular.sync_partitions (partition) VALUES ('p4');
INSERT INTO syncular.sync_writer_fence VALUES ('p5', 9);
SELECT syncular._install_checkpoints(
  '[{"partition": "p6", "name": "late", "schemaVersion": 4},
    {"partition": "p5", "name": "low", "schemaVersion": 2},
    {"partition": "p1", "name": "tasks_v2", "schemaVersion": 4}]', 4);
-- p1..p4 raised to 4 (p3 stays 5); p5 stays 9; p6 (declared only) at 4
SELECT * FROM pg_temp.fence;
-- new rows at their own versions; the existing activated row is untouched
SELECT * FROM pg_temp.cp;
-- no declarations still raises every known partition, never lowering
SELECT syncular._install_checkpoints('[]', 6);
SELECT syncular._install_checkpoints(NULL, 5);
SELECT * FROM pg_temp.fence;
-- bad declarations roll the whole call back
SELECT pg_temp.err($$SELECT syncular._install_checkpoints('[{"partition": "p7", "name": "a", "schemaVersion": 7}, {"partition": "p7"}]', 7)$$);
SELECT pg_temp.err($$SELECT syncular._install_checkpoints('{"partition": "p7"}', 7)$$);
SELECT pg_temp.err($$SELECT syncular._install_checkpoints('[]', NULL)$$);
SELECT count(*) AS p7_rows FROM syncular.sync_backfill_checkpoints WHERE partition = 'p7';
SELECT max(required_writer_version) AS max_fence FROM syncular.sync_writer_fence;

-- ---------------------------------------------------------------- who may serve (§3.5)
-- two pending checkpoints at version 6, in different partitions
SELECT pg_temp.row(syncular.declare_checkpoint('pa', 'one', 6));
SELECT pg_temp.row(syncular.declare_checkpoint('pb', 'two', 6));
-- declaring one of the two is refused, naming the other (in any request partition)
SELECT syncular.serve_gate('pz', '[{"partition": "pa", "name": "one", "schemaVersion": 6}]', 6) -> 'refusal' AS one_of_two;
SELECT pg_temp.err($$SELECT syncular._checkpoint_barrier('[{"partition": "pb", "name": "two", "schemaVersion": 6}]', 6)$$);
-- declaring both serves
SELECT syncular.serve_gate('pz', '[{"partition": "pb", "name": "two", "schemaVersion": 6},
                                   {"partition": "pa", "name": "one", "schemaVersion": 6}]', 6) ->> 'ready' AS both_declared;
SELECT pg_temp.err($$SELECT syncular._checkpoint_barrier('[{"partition": "pb", "name": "two", "schemaVersion": 6}, {"partition": "pa", "name": "one", "schemaVersion": 1}]', 6)$$);
-- rows at other versions never count
SELECT syncular.serve_gate('pz', '[]', 5) ->> 'ready' AS other_version;
-- after both activate, nobody needs to declare them
SELECT syncular.activate_checkpoint('pa', 'one', 0, 0, ARRAY['tasks']) AS pa_one,
       syncular.activate_checkpoint('pb', 'two', 0, 0, ARRAY['tasks']) AS pb_two;
SELECT syncular.serve_gate('pz', '[]', 6) ->> 'ready' AS after_activation;
SELECT pg_temp.err($$SELECT syncular._checkpoint_barrier('[]', 6)$$);

\c :regress_db
DROP DATABASE syncular_t_barrier_checkpoints;
