-- syncular 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular UPDATE TO '0.7.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.7.0'" to load this file. \quit

-- The identifier columns of the catalog in the "C" collation (docs/storage.md "Collation of the
-- keys"): one ALTER TABLE per table, which rebuilds the indexes of its changed columns (no table
-- is rewritten).  The views over these tables are dropped here and created again below (their
-- 0.7.0 text), with the privileges operators granted on them kept.  An object of the operator's
-- own over one of those views, or over a catalog column this update changes or drops (below:
-- sync_partitions.max_commit_seq, sync_changes.scope_var and scope_value), would stop the update
-- half-way with PostgreSQL's "cannot drop" or "cannot alter type" error and a misleading hint
-- (CASCADE): it is refused first, naming them.
DO $$
DECLARE
  keys CONSTANT text[] := ARRAY[
    'sync_partitions.partition', 'sync_partition_registry.partition',
    'sync_row_scopes.partition', 'sync_row_scopes.tbl', 'sync_row_scopes.var', 'sync_row_scopes.value',
    'sync_commits.partition', 'sync_commits.client_id', 'sync_commits.client_commit_id',
    'sync_changes.partition', 'sync_changes.tbl', 'sync_changes.row_id',
    'sync_change_scopes.partition', 'sync_change_scopes.tbl', 'sync_change_scopes.var',
    'sync_change_scopes.value', 'sync_push_results.partition', 'sync_push_results.client_id',
    'sync_push_results.client_commit_id', 'sync_reactions.partition',
    'sync_reactions.idempotency_key', 'sync_reactions.status', 'sync_clients.partition',
    'sync_clients.client_id', 'sync_blob_refs.partition', 'sync_blob_refs.tbl',
    'sync_blob_refs.row_id', 'sync_blob_refs.blob_id', 'sync_tombstones.partition',
    'sync_tombstones.tbl', 'sync_tombstones.row_id', 'sync_backfill_checkpoints.partition',
    'sync_backfill_checkpoints.name', 'sync_writer_fence.partition', 'sync_blobs.partition',
    'sync_blobs.blob_id', 'sync_leases.partition', 'sync_leases.client_id', 'sync_leases.lease_id',
    'sync_leases.actor_id', 'sync_faults.fault', 'sync_faults.partition', 'sync_faults.client_id'];
  dropped CONSTANT text[] := ARRAY['sync_partitions.max_commit_seq', 'sync_changes.scope_var',
                                   'sync_changes.scope_value'];
  views CONSTANT text[] := ARRAY['partitions', 'clients', 'commits', 'push_results', 'partition_lag',
                                 'client_lag', 'reactions'];
  own text;
  t record;
BEGIN
  -- the operator's objects that would stop it or be lost with the views: views, materialized
  -- views and rules over them (by the relation of their rewrite rule), SQL-standard function
  -- bodies, trigger conditions and policies; rules and triggers on the views themselves
  SELECT pg_catalog.string_agg(DISTINCT
           CASE WHEN d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.deptype = 'n'
                THEN (SELECT r.ev_class::regclass::text FROM pg_catalog.pg_rewrite r WHERE r.oid = d.objid)
                ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) END, ', ') INTO own
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_class c ON c.oid = d.refobjid
   WHERE d.refclassid = 'pg_catalog.pg_class'::regclass AND c.relnamespace = 'syncular'::regnamespace
     AND ((d.deptype = 'n'
           AND d.classid IN ('pg_catalog.pg_rewrite'::regclass, 'pg_catalog.pg_proc'::regclass,
                             'pg_catalog.pg_trigger'::regclass, 'pg_catalog.pg_policy'::regclass))
          -- a rule or trigger of the operator's on one of the views (the views have none of ours)
          OR (d.deptype = 'a' AND c.relname = ANY (views)
              AND d.classid IN ('pg_catalog.pg_rewrite'::regclass, 'pg_catalog.pg_trigger'::regclass)))
     -- not the extension's own: its views (the relation of the rule) and functions are members
     AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
                      WHERE e.refclassid = 'pg_catalog.pg_extension'::regclass AND e.deptype = 'e'
                        AND ((d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.deptype = 'n'
                              AND e.classid = 'pg_catalog.pg_class'::regclass
                              AND e.objid = (SELECT r.ev_class FROM pg_catalog.pg_rewrite r
                                              WHERE r.oid = d.objid))
                             OR (e.classid = d.classid AND e.objid = d.objid)))
     AND (c.relname = ANY (views)
          OR c.relname || '.' || (SELECT a.attname FROM pg_catalog.pg_attribute a
                                   WHERE a.attrelid = c.oid AND a.attnum = d.refobjsubid)
             = ANY (keys || dropped));
  IF own IS NOT NULL THEN
    RAISE EXCEPTION 'syncular 0.7.0 cannot be installed over objects of your own on its catalog'
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = pg_catalog.format('The update drops and creates again the views '
                       'syncular.partitions, clients, commits, push_results, partition_lag, '
                       'client_lag and reactions, and changes or drops catalog columns; these '
                       'objects of yours depend on them: %s.', own),
            HINT = 'Save their definitions (pg_get_viewdef, pg_get_functiondef, '
                   'pg_get_triggerdef), drop them, run ALTER EXTENSION syncular UPDATE again and '
                   'create them again after it.';
  END IF;
  -- what the operator set on the views, given back once they are created again (the last
  -- block): privileges on each view and on its columns, its owner, its options
  PERFORM pg_catalog.set_config('syncular_upgrade.views', pg_catalog.jsonb_build_object(
    'grants', coalesce((SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                'view', c.relname, 'col', NULL, 'grantee', a.grantee, 'privilege', a.privilege_type,
                'grantable', a.is_grantable))
               FROM pg_catalog.pg_class c, LATERAL pg_catalog.aclexplode(c.relacl) a
              WHERE c.relnamespace = 'syncular'::regnamespace AND a.grantee <> c.relowner
                AND c.relname = ANY (views)), '[]')
              || coalesce((SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                'view', c.relname, 'col', att.attname, 'grantee', a.grantee,
                'privilege', a.privilege_type, 'grantable', a.is_grantable))
               FROM pg_catalog.pg_class c
               JOIN pg_catalog.pg_attribute att ON att.attrelid = c.oid AND att.attacl IS NOT NULL,
               LATERAL pg_catalog.aclexplode(att.attacl) a
              WHERE c.relnamespace = 'syncular'::regnamespace AND c.relname = ANY (views)), '[]'),
    'owners', (SELECT pg_catalog.jsonb_object_agg(c.relname, c.relowner::regrole::text)
                 FROM pg_catalog.pg_class c
                WHERE c.relnamespace = 'syncular'::regnamespace AND c.relname = ANY (views)),
    'options', coalesce((SELECT pg_catalog.jsonb_object_agg(c.relname,
                                  pg_catalog.array_to_string(c.reloptions, ', '))
                           FROM pg_catalog.pg_class c
                          WHERE c.relnamespace = 'syncular'::regnamespace
                            AND c.relname = ANY (views) AND c.reloptions IS NOT NULL), '{}'))::text,
    true);
  EXECUTE 'DROP VIEW ' || (SELECT pg_catalog.string_agg(pg_catalog.format('syncular.%I', x), ', ')
                             FROM pg_catalog.unnest(views) x);
  FOR t IN SELECT pg_catalog.split_part(k, '.', 1) AS tbl,
                  pg_catalog.string_agg(pg_catalog.format('ALTER COLUMN %I TYPE text COLLATE "C"',
                                                          pg_catalog.split_part(k, '.', 2)), ', ') AS alters
             FROM pg_catalog.unnest(keys) k GROUP BY 1 LOOP
    EXECUTE pg_catalog.format('ALTER TABLE syncular.%I %s', t.tbl, t.alters);
  END LOOP;
END $$;

-- Realtime fanout with the registrations as text (src/fanout.c, src/fanout_regs.c): the gateway
-- passes each socket's registration text and the backend reuses its parse from commit to commit.
--#include udfs/realtime_fanout_arrays/0.7.0.sql
--#include udfs/realtime_fanout_arrays/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]) FROM PUBLIC;
--#include grants/realtime_fanout_arrays/0.7.0.sql

-- The per-backend registration cache, observable (src/fanout_regs.c): realtime_connect now
-- parses the registration it answers into it.
--#include udfs/realtime_registration_cache/0.7.0.sql
--#include udfs/realtime_registration_cache/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_registration_cache() FROM PUBLIC;

-- The commit log (docs/storage.md "Commit log layout"): a pushed commit of one upsert whose
-- scopes are one (variable, value) pair keeps that change, and its scope index entry, in its
-- commit row instead of a sync_changes row: two WAL records and two index entries less per such
-- commit.  The changes already logged that way (the change rows that carry scope_var) move into
-- their commit rows; the pulls serve the same bytes (test/corpus/check.sh).
ALTER TABLE syncular.sync_commits
  ADD COLUMN tbl TEXT COLLATE "C", ADD COLUMN row_id TEXT COLLATE "C", ADD COLUMN op SMALLINT,
  ADD COLUMN row_version BIGINT, ADD COLUMN scopes JSONB, ADD COLUMN payload BYTEA,
  ADD COLUMN scope_var TEXT COLLATE "C", ADD COLUMN scope_value TEXT COLLATE "C";
UPDATE syncular.sync_commits c
   SET tbl = x.tbl, row_id = x.row_id, op = x.op, row_version = x.row_version, scopes = x.scopes,
       payload = x.payload, scope_var = x.scope_var, scope_value = x.scope_value
  FROM syncular.sync_changes x
 WHERE x.scope_var IS NOT NULL AND x.partition = c.partition AND x.commit_seq = c.commit_seq;
DELETE FROM syncular.sync_changes x WHERE x.scope_var IS NOT NULL;
DROP INDEX syncular.sync_changes_by_scope;
ALTER TABLE syncular.sync_changes DROP COLUMN scope_var, DROP COLUMN scope_value;
--#include indexes/sync_commits_by_scope/0.7.0.sql
--#include comments/sync_commits/0.7.0.sql
--#include comments/sync_commits.columns/0.7.0.sql
--#include comments/sync_changes.columns/0.7.0.sql
--#include comments/sync_change_scopes/0.7.0.sql
--#include views/changes/0.7.0.sql
--#include comments/changes/0.7.0.sql
REVOKE ALL ON syncular.changes FROM PUBLIC;
--#include-or-replace views/commits/0.7.0.sql
--#include comments/commits/0.7.0.sql
--#include-or-replace udfs/_source_changes_above/0.7.0.sql
--#include-or-replace udfs/source_coverage_seq/0.7.0.sql
--#include udfs/source_coverage_seq/0.7.0.comment.sql

-- The partition lock (docs/storage.md "The partition lock"): a heavyweight lock per partition
-- instead of an update of its sync_partitions row, and commit_seq read from the log under it
-- (the newest commit row's, or the horizon): no WAL record and no new row version per commit.
-- The counter column goes; a partition whose counter ran ahead of its log and horizon (commits
-- removed by hand) keeps it as its horizon, so no commit_seq is given twice.
--#include udfs/_partition_lock/0.7.0.sql
--#include udfs/_partition_lock/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular._partition_lock(text) FROM PUBLIC;
--#include-or-replace udfs/_lock_partition/0.7.0.sql
--#include udfs/_lock_partition/0.7.0.comment.sql
--#include-or-replace udfs/activate_checkpoint/0.7.0.sql
--#include udfs/activate_checkpoint/0.7.0.comment.sql
--#include-or-replace udfs/prune/0.7.0.sql
--#include udfs/prune/0.7.0.comment.sql
--#include udfs/rotate_log_epoch/0.7.0.comment.sql
--#include-or-replace views/partitions/0.7.0.sql
--#include comments/partitions/0.7.0.sql
--#include-or-replace views/client_lag/0.7.0.sql
LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;   -- no 0.6.0 writer moves a counter meanwhile
UPDATE syncular.sync_partitions p SET horizon_seq = p.max_commit_seq
 WHERE p.max_commit_seq > greatest(p.horizon_seq, coalesce((SELECT max(c.commit_seq)
                                                            FROM syncular.sync_commits c
                                                           WHERE c.partition = p.partition), 0));
ALTER TABLE syncular.sync_partitions DROP COLUMN max_commit_seq;
--#include comments/sync_partitions/0.7.0.sql
--#include comments/sync_partitions.columns/0.7.0.sql
--#include udfs/handle/0.7.0.comment.sql
--#include udfs/_capture_log/0.7.0.comment.sql

-- syncular.pull builds its sections in C (syncular._pull_sections) instead of a PL/pgSQL loop
-- over the response's rendering: the same answer, in one pass.
--#include udfs/_pull_sections/0.7.0.sql
--#include udfs/_pull_sections/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular._pull_sections(bytea) FROM PUBLIC;
--#include-or-replace udfs/pull/0.7.0.sql
-- syncular.push in time linear in its operations (it was quadratic: 5,000 operations took 25
-- times as long as 1,000): its arrays grow in place, tables and commits are looked up by key
--#include-or-replace udfs/push/0.7.0.sql

-- Synced tables leave a tenth of each page free (docs/storage.md "Fillfactor"): most updates of a
-- row stay on its page (HOT) and write no index entry.  New tables are created so; the registered
-- ones get it for the pages they fill from now on (no rewrite).
--#include-or-replace udfs/_create_synced_table/0.7.0.sql
--#include udfs/_create_synced_table/0.7.0.comment.sql
DO $$
DECLARE t record;
BEGIN
  FOR t IN SELECT s.app_schema, x.value ->> 'name' AS name
             FROM syncular.sync_settings s
             CROSS JOIN LATERAL jsonb_array_elements(coalesce(s.compiled -> 'tables', '[]')) AS x(value)
            WHERE s.app_schema IS NOT NULL
              AND (SELECT c.relkind FROM pg_class c
                    WHERE c.oid = to_regclass(format('%I.%I', s.app_schema, x.value ->> 'name'))) = 'r' LOOP
    EXECUTE format('ALTER TABLE %I.%I SET (fillfactor = 90)', t.app_schema, t.name);
  END LOOP;
END $$;

-- The views dropped at the top, created again over the "C" columns (partitions, commits and
-- client_lag above), and the privileges granted on them before the update.
--#include comments/client_lag/0.4.0.sql
--#include views/clients/0.1.0.sql
--#include comments/clients/0.2.0.sql
--#include views/push_results/0.6.0.sql
--#include comments/push_results/0.6.0.sql
--#include views/partition_lag/0.2.0.sql
--#include comments/partition_lag/0.2.0.sql
--#include views/reactions/0.4.0.sql
--#include comments/reactions/0.4.0.sql
DO $$
DECLARE
  saved CONSTANT jsonb := pg_catalog.current_setting('syncular_upgrade.views')::jsonb;
  -- the views the first block dropped (it saved an owner for each)
  views CONSTANT oid[] := ARRAY(SELECT pg_catalog.format('syncular.%I', v)::regclass::oid
                                  FROM pg_catalog.jsonb_object_keys(saved -> 'owners') v);
  init jsonb;
  g record;
BEGIN
  -- owner-only, as a new install leaves them
  EXECUTE 'REVOKE ALL ON ' || pg_catalog.array_to_string(views::regclass[], ', ') || ' FROM PUBLIC';
  -- the views' initial privileges as this script made them (a new install's): a GRANT in an
  -- extension script is recorded as the extension's own, and pg_dump dumps only what differs
  -- from it, so they are put back after the operator's grants are given back
  SELECT pg_catalog.jsonb_object_agg(p.objoid::text, p.initprivs::text) INTO init
    FROM pg_catalog.pg_init_privs p
   WHERE p.classoid = 'pg_catalog.pg_class'::regclass AND p.objoid = ANY (views) AND p.objsubid = 0;
  FOR g IN SELECT x.value ->> 'view' AS view, x.value ->> 'col' AS col,
                  (x.value ->> 'grantee')::oid AS grantee, x.value ->> 'privilege' AS privilege,
                  (x.value ->> 'grantable')::boolean AS grantable
             FROM pg_catalog.jsonb_array_elements(saved -> 'grants') AS x(value) LOOP
    EXECUTE pg_catalog.format('GRANT %s%s ON syncular.%I TO %s%s', g.privilege,
                              CASE WHEN g.col IS NULL THEN ''
                                   ELSE pg_catalog.format(' (%I)', g.col) END, g.view,
                              CASE WHEN g.grantee = 0 THEN 'PUBLIC'
                                   ELSE g.grantee::regrole::text END,
                              CASE WHEN g.grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
  FOR g IN SELECT x.key AS view, x.value AS opts
             FROM pg_catalog.jsonb_each_text(saved -> 'options') AS x LOOP
    EXECUTE pg_catalog.format('ALTER VIEW syncular.%I SET (%s)', g.view, g.opts);
  END LOOP;
  FOR g IN SELECT x.key AS view, x.value AS owner
             FROM pg_catalog.jsonb_each_text(saved -> 'owners') AS x
            WHERE x.value <> (SELECT c.relowner::regrole::text FROM pg_catalog.pg_class c
                               WHERE c.relnamespace = 'syncular'::regnamespace
                                 AND c.relname = x.key) LOOP
    EXECUTE pg_catalog.format('ALTER VIEW syncular.%I OWNER TO %s', g.view, g.owner);
  END LOOP;
  UPDATE pg_catalog.pg_init_privs p SET initprivs = (init ->> p.objoid::text)::pg_catalog.aclitem[]
   WHERE p.classoid = 'pg_catalog.pg_class'::regclass AND p.objoid = ANY (views) AND p.objsubid = 0
     AND init ? p.objoid::text;
  DELETE FROM pg_catalog.pg_init_privs p
   WHERE p.classoid = 'pg_catalog.pg_class'::regclass AND p.objoid = ANY (views) AND p.objsubid <> 0;
END $$;
