-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

-- The two hook rules of the round path in C (src/hook_records.c): the validator rejection
-- decoding and the reaction records' checks and enqueue; the PL/pgSQL helpers only they used go.
--#include-or-replace udfs/_validator_rejection/0.6.0.sql
--#include-or-replace udfs/_enqueue_reactions/0.6.0.sql
--#include udfs/_enqueue_reactions/0.6.0.comment.sql
DROP FUNCTION syncular._reaction_text(integer, jsonb, text, integer);
DROP FUNCTION syncular._reaction_int(jsonb, bigint, bigint);
DROP FUNCTION syncular._invalid_reaction(integer, text, text, jsonb);

-- The schema compiler and ensure_schema in C (src/schema_compile.c, src/schema_ensure.c).
--#include-or-replace udfs/_compile_schema/0.6.0.sql
--#include-or-replace udfs/_ensure_schema/0.6.0.sql
DROP FUNCTION syncular._check_identifier(text, text, text, jsonb);
DROP FUNCTION syncular._schema_invalid(text, text, text, text, jsonb);

-- The commit log layout of 0.6.0 (docs/storage.md, "Commit log layout"): fewer index entries per
-- change and per row-scope entry, the stored rows kept.
-- sync_changes: a pull reads a commit's changes through the primary key (partition, commit_seq,
-- idx) and skips other tables' changes by the row's tbl.
DROP INDEX syncular.sync_changes_by_table;
-- sync_row_scopes: row_id COLLATE "C", so the primary key (rebuilt by the ALTER, the rows stay)
-- serves the byte-order walk of bootstrap pages; a row's entries are addressed through that key
-- from the scopes stored with the row.
DROP INDEX syncular.sync_row_scopes_paging;
DROP INDEX syncular.sync_row_scopes_by_row;
ALTER TABLE syncular.sync_row_scopes ALTER COLUMN row_id TYPE text COLLATE "C";
--#include comments/sync_row_scopes/0.6.0.sql
--#include comments/sync_row_scopes.columns/0.6.0.sql

-- sync_commits: a pushed commit's stored result moves into its commit row (one heap row and one
-- index entry per commit instead of a sync_push_results row and its primary key); the results
-- of commits still in the log move, those of rejected and pruned commits stay in
-- sync_push_results.  No index by time: prune by age walks the primary key.
ALTER TABLE syncular.sync_commits ADD COLUMN result jsonb;
UPDATE syncular.sync_commits c SET result = r.result
  FROM syncular.sync_push_results r
 WHERE r.partition = c.partition AND r.client_id = c.client_id
   AND r.client_commit_id = c.client_commit_id
   AND r.result ->> 'status' = 'applied' AND r.result ->> 'commitSeq' = c.commit_seq::text;
DELETE FROM syncular.sync_push_results r
 USING syncular.sync_commits c
 WHERE r.partition = c.partition AND r.client_id = c.client_id
   AND r.client_commit_id = c.client_commit_id AND c.result IS NOT NULL;
--#include indexes/sync_commits_by_client_commit/0.6.0.sql
DROP INDEX syncular.sync_commits_by_time;
--#include comments/sync_commits/0.6.0.sql
--#include comments/sync_commits.columns/0.6.0.sql
--#include comments/sync_push_results/0.6.0.sql
--#include views/push_results/0.6.0.sql
--#include comments/push_results/0.6.0.sql
REVOKE ALL ON syncular.push_results FROM PUBLIC;
-- sync_changes: a commit of one change whose scopes are one (variable, value) pair keeps its scope
-- index entry in the change row (one index entry instead of a sync_change_scopes row and its
-- key).  Pulls read both places, so the entries of existing commits stay where they are (moving
-- them would rewrite every such change row with its payload); they go with the log's pruning.
ALTER TABLE syncular.sync_changes ADD COLUMN scope_var text, ADD COLUMN scope_value text;
--#include indexes/sync_changes_by_scope/0.6.0.sql
--#include comments/sync_change_scopes/0.6.0.sql
--#include comments/sync_changes.columns/0.6.0.sql

--#include-or-replace udfs/prune/0.6.0.sql

--#include udfs/prune/0.6.0.comment.sql
-- Realtime acks of many sockets in one statement (src/realtime_ack.c, src/storage_acks.c): the
-- gateway writes its pending acks with one call per partition instead of one per socket.
--#include udfs/realtime_ack_many/0.6.0.sql
--#include udfs/realtime_ack_many/0.6.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) FROM PUBLIC;
