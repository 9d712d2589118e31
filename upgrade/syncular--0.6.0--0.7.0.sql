-- syncular 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular UPDATE TO '0.7.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.7.0'" to load this file. \quit

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
  ADD COLUMN tbl TEXT, ADD COLUMN row_id TEXT, ADD COLUMN op SMALLINT, ADD COLUMN row_version BIGINT,
  ADD COLUMN scopes JSONB, ADD COLUMN payload BYTEA, ADD COLUMN scope_var TEXT,
  ADD COLUMN scope_value TEXT;
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
