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

-- Realtime acks of many sockets in one statement (src/realtime_ack.c, src/storage_acks.c): the
-- gateway writes its pending acks with one call per partition instead of one per socket.
--#include udfs/realtime_ack_many/0.6.0.sql
--#include udfs/realtime_ack_many/0.6.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) FROM PUBLIC;
