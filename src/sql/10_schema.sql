-- syncular install script, part 10: schema registration.
--
--   syncular.ensure_schema(ir jsonb, checkpoints jsonb DEFAULT '[]', app_schema text DEFAULT NULL)
--
-- compiles the app's schema IR (typegen `irVersion` 1, or the plain server-schema shape) into the
-- normalized object of docs/compiled-schema.md, then creates, verifies or migrates the synced
-- tables (shared/reference/data-model-and-storage.md §2, §6, §7, §8).  Every helper is internal
-- (`_` prefix), runs with a fixed search_path and quotes every identifier with format('%I').
--
-- Errors (all through syncular._raise, DETAIL = {"code": ..., "details": ...}):
--   sync.storage.schema_invalid          22023  a compile-time rule failed; details {table?, column?, rule, ...}
--   sync.storage.schema_newer            55000  stored marker version > the version being ensured
--   sync.storage.schema_not_append_only  22023  a bump that is not append-only; details {table, column, reason}
--   sync.storage.stored_layout_mismatch  55000  same version, stored layouts differ; details {table, column} | {table}
-- The storage errors among them also carry the readiness phase in details: phase = "storage_migration"
-- (sync.storage.checkpoint_incomplete, raised by the barrier hook, carries "backfill_checkpoint").

-- ---------------------------------------------------------------------------------------------
-- small helpers

--#include udfs/_jstr/0.1.0.sql
--#include udfs/_jstr/0.1.0.comment.sql

--#include udfs/_payload_append_nulls/0.1.0.sql
--#include udfs/_payload_append_nulls/0.1.0.comment.sql

--#include udfs/_fnv1a64_hex/0.1.0.sql
--#include udfs/_fnv1a64_hex/0.1.0.comment.sql

--#include udfs/_physical_index_name/0.1.0.sql
--#include udfs/_physical_index_name/0.1.0.comment.sql

--#include udfs/_pg_type/0.1.0.sql
--#include udfs/_pg_type/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- compile: IR -> compiled schema (docs/compiled-schema.md)

--#include udfs/_compile_schema/0.6.0.sql

--#include udfs/_index_plan/0.1.0.sql
--#include udfs/_index_plan/0.1.0.comment.sql

--#include udfs/_compile_schema/0.1.0.comment.sql

--#include udfs/_layouts_text/0.1.0.sql
--#include udfs/_layouts_text/0.1.0.comment.sql

--#include udfs/_parse_layouts/0.1.0.sql
--#include udfs/_parse_layouts/0.1.0.comment.sql

--#include udfs/_layout_entry_equal/0.1.0.sql
--#include udfs/_layout_entry_equal/0.1.0.comment.sql

-- Same-version stored-layout check (barrier-rfc0007.md §6.1).
-- The errhint of a refused schema change: what a second, different ensure_schema can do instead.
--#include udfs/_schema_change_hint/0.2.0.sql
--#include udfs/_schema_change_hint/0.2.0.comment.sql

--#include udfs/_verify_stored_layouts/0.2.0.sql
--#include udfs/_verify_stored_layouts/0.1.0.comment.sql

--#include udfs/_check_stored_layout/0.1.0.sql
--#include udfs/_check_stored_layout/0.1.0.comment.sql

--#include udfs/_check_physical_layout/0.1.0.sql
--#include udfs/_check_physical_layout/0.1.0.comment.sql

--#include udfs/_checkpoint_barrier/0.1.0.sql
--#include udfs/_checkpoint_barrier/0.1.0.comment.sql

--#include udfs/_install_checkpoints/0.1.0.sql
--#include udfs/_install_checkpoints/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- DDL helpers

--#include udfs/_create_synced_table/0.7.0.sql
--#include udfs/_create_synced_table/0.7.0.comment.sql

--#include udfs/_create_indexes/0.1.0.sql
--#include udfs/_create_indexes/0.1.0.comment.sql

--#include udfs/_drop_owned_indexes/0.1.0.sql
--#include udfs/_drop_owned_indexes/0.1.0.comment.sql

--#include udfs/_projection_expr/0.1.0.sql
--#include udfs/_projection_expr/0.1.0.comment.sql

-- Re-encodes payloads of one table with trailing NULLs (old_n -> new_n columns) and backfills the
-- listed projection columns (backfill: [{name, type}]), walking (partition, row_id) keysets in
-- batches of 500.  Returns the number of rows rewritten.
--#include udfs/_rewrite_rows/0.4.0.sql
--#include udfs/_rewrite_rows/0.4.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- ensure_schema

--#include udfs/_ensure_schema/0.6.0.sql
--#include udfs/_ensure_schema/0.1.0.comment.sql

--#include udfs/ensure_schema/0.1.0.sql
--#include udfs/ensure_schema/0.2.0-2.comment.sql
