-- syncular install script, part 00: the catalog.
-- The core tables keep the reference PostgreSQL layout (shared/reference/data-model-and-storage.md,
-- "PostgreSQL core tables"): names, columns, types, keys and indexes.  They live in the extension
-- schema `syncular`; synced app tables live in the app schema recorded in sync_settings.

\echo Use "CREATE EXTENSION syncular" to load this file. \quit

--#include tables/sync_partitions/0.1.0.sql

--#include tables/sync_partition_registry/0.1.0.sql

--#include tables/sync_row_scopes/0.1.0.sql
--#include indexes/sync_row_scopes_by_row/0.1.0.sql

--#include tables/sync_commits/0.1.0.sql
--#include indexes/sync_commits_by_time/0.1.0.sql

--#include tables/sync_changes/0.1.0.sql
--#include indexes/sync_changes_by_table/0.1.0.sql

--#include tables/sync_change_scopes/0.1.0.sql

--#include tables/sync_push_results/0.1.0.sql

--#include tables/sync_reactions/0.1.0.sql
--#include indexes/sync_reactions_due/0.1.0.sql
--#include indexes/sync_reactions_lease/0.1.0.sql
--#include indexes/sync_reactions_completed/0.1.0.sql
--#include indexes/sync_reactions_dead_letter/0.1.0.sql

--#include tables/sync_clients/0.1.0.sql

--#include tables/sync_blob_refs/0.1.0.sql
--#include indexes/sync_blob_refs_by_blob/0.1.0.sql

--#include tables/sync_tombstones/0.1.0.sql

--#include tables/sync_backfill_checkpoints/0.1.0.sql

--#include tables/sync_writer_fence/0.1.0.sql

--#include tables/sync_schema_meta/0.1.0.sql

--#include udfs/syncular_writer_fence/0.1.0.sql
--#include udfs/syncular_writer_fence/0.1.0.comment.sql

--#include triggers/sync_commits_writer_fence/0.1.0.sql

-- ---------------------------------------------------------------------------------------------
-- Extension-owned configuration (not part of the reference layout).

--#include tables/sync_settings/0.1.0.sql

--#include tables/sync_row_validators/0.1.0.sql

-- pg_dump keeps the data of every catalog table.
--#include config_dump/sync_partitions/0.1.0.sql

-- App roles get EXECUTE on the SQL surface, never raw writes to the catalog.
REVOKE ALL ON ALL TABLES IN SCHEMA syncular FROM PUBLIC;

--#include indexes/sync_row_scopes_paging/0.1.0.sql
-- syncular install script, part 05: the error catalogue (src/errors.c).

--#include udfs/_raise-3/0.1.0.sql
--#include udfs/_raise-3/0.1.0.comment.sql

--#include udfs/error_catalog/0.1.0.sql
--#include udfs/error_catalog/0.1.0.comment.sql
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

--#include udfs/_schema_invalid/0.1.0.sql
--#include udfs/_schema_invalid/0.1.0.comment.sql

--#include udfs/_check_identifier/0.1.0.sql
--#include udfs/_check_identifier/0.1.0.comment.sql

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

--#include udfs/_compile_schema/0.1.0.sql

--#include udfs/_index_plan/0.1.0.sql
--#include udfs/_index_plan/0.1.0.comment.sql

--#include udfs/_compile_schema/0.1.0.comment.sql

--#include udfs/_layouts_text/0.1.0.sql
--#include udfs/_layouts_text/0.1.0.comment.sql

--#include udfs/_parse_layouts/0.1.0.sql
--#include udfs/_parse_layouts/0.1.0.comment.sql

--#include udfs/_layout_entry_equal/0.1.0.sql
--#include udfs/_layout_entry_equal/0.1.0.comment.sql

--#include udfs/_verify_stored_layouts/0.1.0.sql
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

--#include udfs/_create_synced_table/0.1.0.sql
--#include udfs/_create_synced_table/0.1.0.comment.sql

--#include udfs/_create_indexes/0.1.0.sql
--#include udfs/_create_indexes/0.1.0.comment.sql

--#include udfs/_drop_owned_indexes/0.1.0.sql
--#include udfs/_drop_owned_indexes/0.1.0.comment.sql

--#include udfs/_projection_expr/0.1.0.sql
--#include udfs/_projection_expr/0.1.0.comment.sql

--#include udfs/_rewrite_rows/0.1.0.sql
--#include udfs/_rewrite_rows/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- ensure_schema

--#include udfs/_ensure_schema/0.1.0.sql
--#include udfs/_ensure_schema/0.1.0.comment.sql

--#include udfs/ensure_schema/0.1.0.sql
--#include udfs/ensure_schema/0.1.0.comment.sql
-- syncular install script, part 20: hook registration (DESIGN.md decision 7).
--
-- Hooks are plain SQL-callable functions registered by regprocedure in syncular.sync_settings.

--#include udfs/_check_hook_signature/0.1.0.sql
--#include udfs/_check_hook_signature/0.1.0.comment.sql

--#include udfs/set_scope_resolver/0.1.0.sql
--#include udfs/set_scope_resolver/0.1.0.comment.sql
-- syncular install script, part 25: write-path hooks (DESIGN.md decision 7; push-and-pull.md §2.7,
-- §2.8; barrier-rfc0007.md §8; docs/hooks.md).
--
-- Row validators (§6.7) live in syncular.sync_row_validators (one per synced table); the commit
-- validator (§6.8) and the reaction planner (§6.9) in syncular.sync_settings.  Every registration
-- also rewrites the sync_settings row so that the C engine's per-backend cache (keyed by that row's
-- xmin/ctid, src/schema.c) reloads.  _validator_rejection is the one decoding rule that turns an
-- error raised by a hook into a push rejection.

--#include udfs/_compact_json/0.1.0.sql
--#include udfs/_compact_json/0.1.0.comment.sql

--#include udfs/_touch_settings/0.1.0.sql
--#include udfs/_touch_settings/0.1.0.comment.sql

--#include udfs/set_row_validator/0.1.0.sql
--#include udfs/set_row_validator/0.1.0.comment.sql

--#include udfs/set_commit_validator/0.1.0.sql
--#include udfs/set_commit_validator/0.1.0.comment.sql

--#include udfs/set_reaction_planner/0.1.0.sql
--#include udfs/set_reaction_planner/0.1.0.comment.sql

--#include udfs/_validator_rejection/0.1.0.sql
--#include udfs/_validator_rejection/0.1.0.comment.sql
-- syncular install script, part 30: the engine's SQL entry points (src/sql_api.c).

--#include udfs/handle/0.1.0.sql
--#include udfs/handle/0.1.0.comment.sql

--#include udfs/handle_http/0.1.0.sql
--#include udfs/handle_http/0.1.0.comment.sql

--#include udfs/sync/0.1.0.sql
--#include udfs/sync/0.1.0.comment.sql
-- syncular install script, part 35: row helpers (src/rows.c).
-- A row of a registered table as a JSON object keyed by column name, to and from the row codec
-- (shared/reference/wire-format.md §4.2 full rows, §4.3 sparse rows).
-- JSON mapping: string -> JSON string; integer -> number (an integer within ±(2^53-1));
-- float -> number (NaN/±Infinity decode to null); boolean -> true/false; json -> the embedded
-- JSON value (encoding stores the jsonb value's text; decoding returns the parsed value, or null
-- when jsonb cannot hold it, e.g. U+0000); bytes and crdt -> standard base64 string;
-- blob_ref -> JSON object; SQL NULL / JSON null -> NULL.

--#include udfs/encode_row/0.1.0.sql
--#include udfs/encode_row/0.1.0.comment.sql

--#include udfs/encode_sparse_row/0.1.0.sql
--#include udfs/encode_sparse_row/0.1.0.comment.sql

--#include udfs/decode_row/0.1.0.sql
--#include udfs/decode_row/0.1.0.comment.sql

--#include udfs/decode_sparse_row/0.1.0.sql
--#include udfs/decode_sparse_row/0.1.0.comment.sql
-- syncular install script, part 36: debugging (src/debug.c).

--#include udfs/debug_render/0.1.0.sql
--#include udfs/debug_render/0.1.0.comment.sql

--#include udfs/debug_encode/0.1.0.sql
--#include udfs/debug_encode/0.1.0.comment.sql
-- syncular install script, part 40: maintenance (push-and-pull.md §5, §1.2; data-model-and-storage.md §8).
--
-- prune() and rotate_log_epoch() take the partition's sync_partitions row FOR UPDATE first and
-- the sync_partition_registry row FOR UPDATE second (the one lock order of §8).  The views are
-- read-only conveniences over the catalog; like the catalog they are owner-only until granted.

--#include udfs/_lock_partition/0.1.0.sql
--#include udfs/_lock_partition/0.1.0.comment.sql

--#include udfs/_retention_value/0.1.0.sql
--#include udfs/_retention_value/0.1.0.comment.sql

--#include udfs/prune/0.1.0.sql
--#include udfs/prune/0.1.0.comment.sql

--#include udfs/rotate_log_epoch/0.1.0.sql
--#include udfs/rotate_log_epoch/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- read-only views

--#include views/partitions/0.1.0.sql
COMMENT ON VIEW syncular.partitions IS
  'Read-only. One row per known partition (counter row and/or registry row): max_commit_seq, horizon_seq (0 when the partition never pushed), log_epoch and last_authenticated_at_ms (NULL when unregistered), clients = number of client records. push-and-pull.md §5.';

--#include views/clients/0.1.0.sql
COMMENT ON VIEW syncular.clients IS
  'Read-only. The client records (push-and-pull.md §1.3) plus behind_horizon: true when 0 <= cursor < the partition''s horizon_seq (its next pull resets with sync.cursor_expired).';

--#include views/commits/0.1.0.sql
COMMENT ON VIEW syncular.commits IS
  'Read-only. The commit log (data-model-and-storage.md §1.2, §4 sync_commits) with changes = number of sync_changes rows and tables = the distinct tables they touch.';
-- syncular install script, part 50: SQL producers.
-- syncular.push / syncular.pull take and return JSON (rows as objects keyed by column name) and
-- run the same engine as clients: they build an SSP2 wire-3 request, serve it with
-- syncular.handle(), and render the response.  For backend code (jobs, admin tools, triggers in
-- other systems) and for debugging.  push and pull are SECURITY DEFINER (like handle), so a role
-- with EXECUTE on them needs no privileges on the catalog.

--#include udfs/_producer_epoch/0.1.0.sql

--#include udfs/_bitmap_columns/0.1.0.sql

--#include udfs/push/0.1.0.sql

--#include udfs/push/0.1.0.comment.sql

--#include udfs/pull/0.1.0.sql

--#include udfs/pull/0.1.0.comment.sql
-- syncular install script, part 60: the RFC 0007 barrier (shared/reference/barrier-rfc0007.md).
--
--   backfill checkpoints  declare / claim / advance / activate / checkpoints / source_coverage_seq
--   writer fence          raised by every install (max semantics, never lowered) and, on every
--                         schema bump, for every partition in sync_partitions (0.30.4 behaviour);
--   serve gate            serve_gate (one SELECT) and _serve_gate_check (the C engine's form,
--                         with the epoch kind); both STABLE, so they read the caller's snapshot
--   readiness             readiness, _checkpoint_barrier (ensure_schema's barrier)
--   same-version check    _check_physical_layout (§6.2)
--
-- The hooks syncular._checkpoint_barrier, syncular._install_checkpoints and
-- syncular._check_physical_layout are defined as no-ops by 10_schema.sql (same signatures); this
-- file is concatenated after it and replaces them.  ensure_schema calls _checkpoint_barrier under
-- the migration lock before reading the marker (so also on a same-version open),
-- _check_physical_layout after the stored-layout check of a same-version open, and
-- _install_checkpoints right after the marker write of a create or a bump.
--
-- Conventions: every function that reads or writes the catalog pins
-- `search_path = pg_catalog, pg_temp` and qualifies every object.  Parameters keep their API
-- names (`partition`, `name`, ...); inside the bodies `#variable_conflict use_column` makes an
-- unqualified name a column and parameters are always written `<function>.<parameter>`.
-- Pending checkpoints and checkpoint listings are ordered by (partition, name) COLLATE "C", so
-- the order (and the checkpoint named in a refusal) does not depend on the database collation.
-- Fixed messages; identifiers go only in the JSON details.

-- ---------------------------------------------------------------------------------------------
-- internal helpers

--#include-or-replace udfs/_checkpoint_json/0.1.0.sql
--#include udfs/_checkpoint_json/0.1.0.comment.sql

--#include-or-replace udfs/_checkpoint_args/0.1.0.sql
--#include udfs/_checkpoint_args/0.1.0.comment.sql

--#include-or-replace udfs/_checkpoint_declarations/0.1.0.sql
--#include udfs/_checkpoint_declarations/0.1.0.comment.sql

--#include-or-replace udfs/_first_undeclared_checkpoint/0.1.0.sql
--#include udfs/_first_undeclared_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/_install_checkpoint/0.1.0.sql
--#include udfs/_install_checkpoint/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- checkpoints

--#include-or-replace udfs/declare_checkpoint/0.1.0.sql
--#include udfs/declare_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/claim_checkpoint/0.1.0.sql
--#include udfs/claim_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/advance_checkpoint/0.1.0.sql
--#include udfs/advance_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/_source_changes_above/0.1.0.sql
--#include udfs/_source_changes_above/0.1.0.comment.sql

--#include-or-replace udfs/activate_checkpoint/0.1.0.sql
--#include udfs/activate_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/checkpoints/0.1.0.sql
--#include udfs/checkpoints/0.1.0.comment.sql

--#include-or-replace udfs/source_coverage_seq/0.1.0.sql
--#include udfs/source_coverage_seq/0.1.0.comment.sql


-- ---------------------------------------------------------------------------------------------
-- the serve gate (§4)

--#include-or-replace udfs/serve_gate/0.1.0.sql
--#include udfs/serve_gate/0.1.0.comment.sql

--#include-or-replace udfs/_serve_gate_check/0.1.0.sql
--#include udfs/_serve_gate_check/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- ensure_schema hooks and the readiness report

--#include-or-replace udfs/_checkpoint_barrier/0.1.0-2.sql
--#include udfs/_checkpoint_barrier/0.1.0-2.comment.sql

--#include-or-replace udfs/_install_checkpoints/0.1.0-2.sql
--#include udfs/_install_checkpoints/0.1.0-2.comment.sql

--#include-or-replace udfs/_check_physical_layout/0.1.0-2.sql
--#include udfs/_check_physical_layout/0.1.0-2.comment.sql

--#include-or-replace udfs/_error_cause/0.1.0.sql
--#include udfs/_error_cause/0.1.0.comment.sql

--#include-or-replace udfs/readiness/0.1.0.sql
--#include udfs/readiness/0.1.0.comment.sql
-- syncular install script, part 70: durable reactions (§6.9; push-and-pull.md §2.8;
-- data-model-and-storage.md "sync_reactions", §8 "Reaction claim and prune"; docs/hooks.md).
--
-- Row life cycle (status):
--   pending --claim--> leased --complete--> completed
--                        |  \--fail (attempts < max_attempts, not permanent)--> pending (backoff)
--                        |  \--fail (attempts >= max_attempts or permanent)--> dead-letter
--                        \--lease expired--> claimable again (attempts counts every claim)
--   dead-letter --retry_dead_letter_reaction--> pending (attempts 0)
-- Invariant: lease_owner and lease_expires_at_ms are non-NULL exactly while status = 'leased'.
-- available_at_ms is the earliest claim time of a pending row and, for a dead-letter row, the
-- time it was dead-lettered (what sync_reactions_dead_letter indexes and prune_reactions ages).
-- Times are Unix epoch milliseconds.  Every function takes an optional trailing now_ms (NULL =
-- the wall clock, clock_timestamp()) so that callers and tests can pin time.
-- The worker functions (claim, renew, complete, fail) are SECURITY DEFINER so that an operator
-- can GRANT EXECUTE on them to a worker role without granting the catalog; like every routine
-- of the extension they are not executable by PUBLIC (90_grants).

--#include udfs/_reaction_now/0.1.0.sql
--#include udfs/_reaction_now/0.1.0.comment.sql

--#include udfs/_reaction_arg/0.1.0.sql
--#include udfs/_reaction_arg/0.1.0.comment.sql

--#include udfs/_invalid_reaction/0.1.0.sql
--#include udfs/_invalid_reaction/0.1.0.comment.sql

--#include udfs/_reaction_int/0.1.0.sql
--#include udfs/_reaction_int/0.1.0.comment.sql

--#include udfs/_reaction_text/0.1.0.sql
--#include udfs/_reaction_text/0.1.0.comment.sql

--#include udfs/_enqueue_reactions/0.1.0.sql
--#include udfs/_enqueue_reactions/0.1.0.comment.sql

--#include udfs/claim_reactions/0.1.0.sql
--#include udfs/claim_reactions/0.1.0.comment.sql

--#include udfs/renew_reaction_lease/0.1.0.sql
--#include udfs/renew_reaction_lease/0.1.0.comment.sql

--#include udfs/complete_reaction/0.1.0.sql
--#include udfs/complete_reaction/0.1.0.comment.sql

--#include udfs/fail_reaction/0.1.0.sql
--#include udfs/fail_reaction/0.1.0.comment.sql

--#include udfs/retry_dead_letter_reaction/0.1.0.sql
--#include udfs/retry_dead_letter_reaction/0.1.0.comment.sql

--#include udfs/prune_reactions/0.1.0.sql
--#include udfs/prune_reactions/0.1.0.comment.sql

--#include views/reactions/0.1.0.sql
COMMENT ON VIEW syncular.reactions IS
  'Read-only. The durable reactions (push-and-pull.md §2.8; sync_reactions) with key = the planner''s record key (element 3 of the idempotency key) and due = claimable now by the wall clock (pending and available, or leased with an expired lease). Times in epoch ms; for a dead-letter row available_at_ms is the time it was dead-lettered. Owner-only until granted.';
REVOKE ALL ON syncular.reactions FROM PUBLIC;
-- syncular install script, part 90: privileges.
--
-- Model (decided here; DESIGN.md "SQL surface"):
--   * The catalog tables are never writable by app roles (00_catalog revokes them from PUBLIC).
--   * The serving surface (handle, handle_http, push, pull, readiness, ...) is SECURITY DEFINER
--     with a fixed search_path, so a role that may EXECUTE it acts on the catalog only through the
--     protocol, never through raw table writes.  The sync procedure cannot be (PostgreSQL forbids
--     COMMIT in a SECURITY DEFINER procedure): it runs with the caller's rights, so grant it only
--     to a role that owns or may write the catalog.
--   * Nothing is executable by PUBLIC by default: serving as an arbitrary actor of an arbitrary
--     partition is a privilege the operator hands out explicitly.  Schema USAGE is public so that
--     granted roles can name the functions.
--   * Schema registration (ensure_schema), hook registration (set_*), maintenance (prune,
--     rotate_log_epoch), the barrier API and every internal `_` helper stay owner-only
--     (the extension owner, normally a superuser).  The views are owner-only until granted.
--
-- Operators grant what each role needs, for example:
--
--   -- a stateless gateway role: serve rounds
--   GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle_http(...)         TO sync_gateway;   -- see \df syncular.handle_http
--
--   -- backend jobs writing synced data from SQL
--   GRANT EXECUTE ON FUNCTION syncular.push(text, text, text, jsonb) TO app_jobs;
--   GRANT EXECUTE ON FUNCTION syncular.pull(text, text, text, jsonb) TO app_jobs;
--
--   -- a monitoring role
--   GRANT SELECT ON syncular.partitions, syncular.clients, syncular.commits TO monitoring;
--
-- Hooks (scope resolver, validators) run inside the SECURITY DEFINER round as the extension
-- owner; write them with a fixed search_path like any definer-called code.

GRANT USAGE ON SCHEMA syncular TO PUBLIC;

-- Functions are executable by PUBLIC on creation; take that back for every routine of the
-- extension (functions and procedures), then let the operator grant per role as above.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;

-- Explicitly owner-only, whatever is granted in bulk later (documentation by statement).
REVOKE EXECUTE ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.set_scope_resolver(regprocedure) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.prune(text, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.rotate_log_epoch(text) FROM PUBLIC;
REVOKE ALL ON syncular.partitions, syncular.clients, syncular.commits FROM PUBLIC;
