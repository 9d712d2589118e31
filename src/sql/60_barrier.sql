-- syncular install script, part 60: the RFC 0007 barrier (shared/reference/barrier-rfc0007.md).
--
--   backfill checkpoints  declare / claim / advance / activate / checkpoints / source_coverage_seq
--   writer fence          raised by every install (max semantics, never lowered) and, on every
--                         schema bump, for every partition in sync_partitions (0.30.4 behaviour);
--   serve gate            serve_gate (the report) and _serve_gate_check (the engine's form, with
--                         the epoch kind): both C (src/gate.c, the rule's one definition), STABLE,
--                         so they read the caller's snapshot
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

-- install (§3.2): the declared row (never touching an existing one) and the fence raise.
--#include-or-replace udfs/_install_checkpoint/0.4.0.sql
--#include udfs/_install_checkpoint/0.1.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- checkpoints

--#include-or-replace udfs/declare_checkpoint/0.1.0.sql
--#include udfs/declare_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/claim_checkpoint/0.4.0.sql
--#include udfs/claim_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/advance_checkpoint/0.4.0.sql
--#include udfs/advance_checkpoint/0.1.0.comment.sql

--#include-or-replace udfs/_source_changes_above/0.7.0.sql
--#include udfs/_source_changes_above/0.1.0.comment.sql

--#include-or-replace udfs/activate_checkpoint/0.7.0.sql
--#include udfs/activate_checkpoint/0.7.0.comment.sql

--#include-or-replace udfs/checkpoints/0.1.0.sql
--#include udfs/checkpoints/0.1.0.comment.sql

--#include-or-replace udfs/source_coverage_seq/0.7.0.sql
--#include udfs/source_coverage_seq/0.7.0.comment.sql


-- ---------------------------------------------------------------------------------------------
-- the serve gate (§4)

--#include-or-replace udfs/serve_gate/0.2.0.sql
--#include udfs/serve_gate/0.1.0.comment.sql

--#include-or-replace udfs/_serve_gate_check/0.2.0.sql
--#include udfs/_serve_gate_check/0.2.0.comment.sql

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
