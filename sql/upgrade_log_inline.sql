-- upgrade_log_inline: the 0.7.0 commit log (docs/storage.md "Commit log layout").  This library
-- on a 0.6.0 catalog (ALTER EXTENSION pending) logs a one-upsert commit as 0.6.0 did (a change row
-- carrying the scope entry) and serves it; the update moves those changes into their commit rows,
-- pulls serve the same commits after it, and new commits are logged in the commit row.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_log_inline;
\c syncular_t_log_inline
SET client_min_messages = warning;
CREATE EXTENSION syncular VERSION '0.6.0';
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"]}]}'::jsonb, '[]'::jsonb, 'public') ->> 'action' AS schema_action;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1", "l2"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
CREATE FUNCTION pg_temp.push(id text, ops text) RETURNS text LANGUAGE sql AS $$
  SELECT syncular.push('p1', 'u1', 'c1', format('[{"clientCommitId": "%s", "operations": %s}]',
                                                id, ops)::jsonb) -> 0 ->> 'status'
$$;
-- a pull of both lists from cursor 0: the commits and their changes, as a client gets them
CREATE FUNCTION pg_temp.pulled(list text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT syncular.pull('p1', 'u1', 'c2', format('[{"id": "s", "table": "todos",
           "scopes": {"list_id": ["%s"]}, "cursor": 0}]', list)::jsonb) -> 0 -> 'commits'
$$;
-- one-upsert commits (a, b, d), a commit of two changes (c) and a delete (e), on 0.6.0's catalog
SELECT pg_temp.push('a', '[{"table": "todos", "row": {"id": "t1", "list_id": "l1", "title": "one"}}]');
SELECT pg_temp.push('b', '[{"table": "todos", "row": {"id": "t2", "list_id": "l2", "title": "two"}}]');
SELECT pg_temp.push('c', '[{"table": "todos", "row": {"id": "t3", "list_id": "l1", "title": "three"}},
                           {"table": "todos", "row": {"id": "t4", "list_id": "l2", "title": "four"}}]');
SELECT pg_temp.push('d', '[{"table": "todos", "row": {"id": "t1", "list_id": "l1", "title": "one again"}}]');
SELECT pg_temp.push('e', '[{"table": "todos", "op": "delete", "rowId": "t2"}]');
-- as 0.6.0 logged them: the one-upsert commits' scope entries in their change rows
SELECT commit_seq, idx, row_id, scope_var, scope_value FROM syncular.sync_changes ORDER BY 1, 2;
SELECT pg_temp.pulled('l1') AS l1_before \gset
SELECT pg_temp.pulled('l2') AS l2_before \gset
SELECT jsonb_array_length(:'l1_before'::jsonb) AS l1_commits, jsonb_array_length(:'l2_before'::jsonb) AS l2_commits;

-- p2: three commits, the newest removed by hand (the 0.6.0 counter stays at 3)
SELECT r ->> 'commitSeq' AS p2_seq FROM jsonb_array_elements(syncular.push('p2', 'u1', 'c1', '[
  {"clientCommitId": "x1", "operations": [{"table": "todos", "row": {"id": "y1", "list_id": "l1", "title": "1"}}]},
  {"clientCommitId": "x2", "operations": [{"table": "todos", "row": {"id": "y2", "list_id": "l1", "title": "2"}}]},
  {"clientCommitId": "x3", "operations": [{"table": "todos", "row": {"id": "y3", "list_id": "l1", "title": "3"}}]}]')) r;
DELETE FROM syncular.sync_changes WHERE partition = 'p2' AND commit_seq = 3;
DELETE FROM syncular.sync_commits WHERE partition = 'p2' AND commit_seq = 3;
SELECT partition, max_commit_seq, horizon_seq FROM syncular.sync_partitions ORDER BY 1;

-- an operator's grants on the views the update drops and creates again (docs/storage.md
-- "Collation of the keys")
CREATE ROLE syncular_t_monitor;
GRANT SELECT ON syncular.commits, syncular.client_lag TO syncular_t_monitor;
GRANT SELECT ON syncular.partitions TO syncular_t_monitor WITH GRANT OPTION;
GRANT SELECT (partition, client_id) ON syncular.clients TO syncular_t_monitor;
ALTER VIEW syncular.partition_lag SET (security_barrier = true);
ALTER VIEW syncular.push_results OWNER TO syncular_t_monitor;
GRANT SELECT ON syncular.reactions TO PUBLIC;

-- objects of the operator's own over a view the update drops and creates again, or over a catalog
-- column it changes (views, a SQL-standard function body, a trigger's condition): refused first,
-- naming them, and nothing changes; a view over columns the update leaves alone stays
CREATE VIEW public.my_commits AS SELECT partition, commit_seq FROM syncular.commits;
CREATE VIEW public.my_scopes AS SELECT tbl, var FROM syncular.sync_row_scopes;
CREATE VIEW public.my_seqs AS SELECT commit_seq, idx FROM syncular.sync_changes;
CREATE FUNCTION public.my_count() RETURNS bigint LANGUAGE sql
BEGIN ATOMIC SELECT count(*) FROM syncular.clients; END;
CREATE FUNCTION public.my_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER my_note AFTER INSERT ON syncular.sync_tombstones FOR EACH ROW
  WHEN (NEW.partition = 'p9') EXECUTE FUNCTION public.my_note();
CREATE TRIGGER my_instead INSTEAD OF INSERT ON syncular.commits FOR EACH ROW
  EXECUTE FUNCTION public.my_note();
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER EXTENSION syncular UPDATE TO '0.7.0';
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT extversion FROM pg_extension WHERE extname = 'syncular';
DROP VIEW public.my_commits, public.my_scopes;
DROP FUNCTION public.my_count();
DROP TRIGGER my_note ON syncular.sync_tombstones;
DROP TRIGGER my_instead ON syncular.commits;
DROP FUNCTION public.my_note();

ALTER EXTENSION syncular UPDATE TO '0.7.0';
SELECT count(*) AS my_seqs_rows FROM public.my_seqs;
DROP VIEW public.my_seqs;
-- the catalog's key columns compare as bytes: every text column of a catalog index is "C", the
-- synced table registered before the update keeps its own collation
SELECT count(*) AS key_columns,
       count(*) FILTER (WHERE a.attcollation <> 'pg_catalog."C"'::regcollation) AS not_c
  FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
 WHERE c.relnamespace = 'syncular'::regnamespace AND a.atttypid = 'text'::regtype
   AND c.relname NOT LIKE 'sync\_segment%' AND c.relname NOT LIKE 'sync\_operation%'
   AND c.relname NOT IN ('sync_crdt_mergers', 'sync_row_validators');
SELECT attname, attcollation::regcollation FROM pg_attribute
 WHERE attrelid = 'public.todos'::regclass AND attname IN ('_sync_partition', '_sync_row_id') ORDER BY 1;
-- the grants on the views created again are kept
SELECT c.relname, a.grantee::regrole AS grantee, a.privilege_type, a.is_grantable
  FROM pg_class c, LATERAL aclexplode(c.relacl) a
 WHERE c.relnamespace = 'syncular'::regnamespace AND c.relkind = 'v' AND a.grantee <> c.relowner
 ORDER BY 1, 2;
-- and the privileges on their columns, their owner and their options
SELECT t.attname, a.grantee::regrole AS grantee, a.privilege_type
  FROM pg_attribute t, LATERAL aclexplode(t.attacl) a
 WHERE t.attrelid = 'syncular.clients'::regclass ORDER BY t.attnum;
SELECT relname, relowner = 'syncular_t_monitor'::regrole AS monitor_owns, reloptions FROM pg_class
 WHERE relnamespace = 'syncular'::regnamespace AND relname IN ('push_results', 'partition_lag')
 ORDER BY 1;
-- they are the operator's, not the extension's initial privileges (pg_dump dumps only those that
-- differ from the initial ones)
SELECT count(*) AS monitor_in_initial_privileges
  FROM pg_init_privs p, LATERAL aclexplode(p.initprivs) a
 WHERE p.classoid = 'pg_class'::regclass AND a.grantee = 'syncular_t_monitor'::regrole;
ALTER VIEW syncular.push_results OWNER TO CURRENT_USER;
DROP OWNED BY syncular_t_monitor;
DROP ROLE syncular_t_monitor;
-- the partition lock reads commit_seq from the log since 0.7.0 (docs/storage.md "The partition
-- lock"): p2's counter, ahead of its log, became its horizon, and its next commit is 4, not 3
SELECT partition, max_commit_seq, horizon_seq FROM syncular.partitions ORDER BY 1;
SELECT r ->> 'commitSeq' AS p2_next FROM jsonb_array_elements(syncular.push('p2', 'u1', 'c1', '[
  {"clientCommitId": "x4", "operations": [{"table": "todos", "row": {"id": "y4", "list_id": "l1", "title": "4"}}]}]')) r;
BEGIN;
SELECT r ->> 'commitSeq' AS p2_rolled_back FROM jsonb_array_elements(syncular.push('p2', 'u1', 'c1', '[
  {"clientCommitId": "x5", "operations": [{"table": "todos", "row": {"id": "y5", "list_id": "l1", "title": "5"}}]}]')) r;
ROLLBACK;
SELECT r ->> 'commitSeq' AS p2_next FROM jsonb_array_elements(syncular.push('p2', 'u1', 'c1', '[
  {"clientCommitId": "x6", "operations": [{"table": "todos", "row": {"id": "y6", "list_id": "l1", "title": "6"}}]}]')) r;
DELETE FROM syncular.sync_commits WHERE partition = 'p2';
DELETE FROM syncular.sync_partitions WHERE partition = 'p2';
-- the one-upsert commits' changes moved into their commit rows; the others stayed
SELECT commit_seq, client_commit_id, tbl, row_id, op, row_version, scopes, scope_var, scope_value,
       syncular.decode_row(tbl, payload) ->> 'title' AS title
  FROM syncular.sync_commits ORDER BY commit_seq;
SELECT commit_seq, idx, row_id, op FROM syncular.sync_changes ORDER BY 1, 2;
SELECT commit_seq, idx, row_id, op FROM syncular.changes ORDER BY 1, 2;
SELECT commit_seq, changes, tables FROM syncular.commits ORDER BY 1;
-- the same commits are served
SELECT pg_temp.pulled('l1') = :'l1_before'::jsonb AS l1_same, pg_temp.pulled('l2') = :'l2_before'::jsonb AS l2_same;
-- the synced table leaves a tenth of each new page free (docs/storage.md "Fillfactor")
SELECT reloptions AS todos_options FROM pg_class WHERE oid = 'public.todos'::regclass;
-- a new one-upsert commit is logged in its commit row alone, and served
SELECT pg_temp.push('f', '[{"table": "todos", "row": {"id": "t5", "list_id": "l2", "title": "five"}}]');
SELECT commit_seq, row_id, scope_var, scope_value,
       (SELECT count(*) FROM syncular.sync_changes x WHERE x.commit_seq = c.commit_seq) AS change_rows,
       (SELECT count(*) FROM syncular.sync_change_scopes s WHERE s.commit_seq = c.commit_seq) AS scope_rows
  FROM syncular.sync_commits c WHERE client_commit_id = 'f';
SELECT c ->> 'commitSeq' AS seq, c -> 'changes' -> 0 ->> 'rowId' AS row_id,
       c -> 'changes' -> 0 -> 'row' ->> 'title' AS title
  FROM jsonb_array_elements(pg_temp.pulled('l2')) c;
-- a replay answers its stored result
SELECT pg_temp.push('f', '[{"table": "todos", "row": {"id": "t5", "list_id": "l2", "title": "five"}}]') AS replayed;
-- the barrier's coverage reads see the changes kept in commit rows
SELECT syncular.source_coverage_seq('p1', ARRAY['todos']) AS coverage;
-- prune removes them with their commit rows
SELECT syncular.prune('p1', '{"minRetainedCommits": 1, "activeWindowMs": 0}') AS pruned;
SELECT commit_seq, row_id FROM syncular.changes ORDER BY 1;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_log_inline;
