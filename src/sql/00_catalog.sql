-- syncular install script, part 00: the catalog.
-- The core tables keep the reference PostgreSQL layout (shared/reference/data-model-and-storage.md,
-- "PostgreSQL core tables"): names, columns, types, keys and indexes, except where
-- docs/storage.md ("Commit log layout") says otherwise and why.  They live in the extension
-- schema `syncular`; synced app tables live in the app schema recorded in sync_settings.

\echo Use "CREATE EXTENSION syncular" to load this file. \quit

-- Every text column of a key or index of these tables (partition, table, scope variable and
-- value, row id, client id, clientCommitId, ...) is COLLATE "C": identifiers compare as bytes,
-- whatever the database's default collation, and a key comparison is a memcmp instead of the
-- locale's strcoll (docs/storage.md "Collation of the keys"; a departure from the reference
-- layout, whose columns take the default collation).

-- per-partition state: the prune horizon; the row also lists the partition (written once, by
-- its first writer).  The partition lock is not a lock of this row (docs/storage.md "The
-- partition lock"); ensure_schema and unregister_schema take LOCK TABLE ... IN EXCLUSIVE MODE on
-- it, which waits for the writers' RowExclusiveLock.
CREATE TABLE syncular.sync_partitions (
  partition       TEXT COLLATE "C" PRIMARY KEY,
  horizon_seq     BIGINT NOT NULL DEFAULT 0
);

-- holds the log epoch (§2.1)
CREATE TABLE syncular.sync_partition_registry (
  partition                 TEXT COLLATE "C" PRIMARY KEY,
  log_epoch                 TEXT NOT NULL,
  epoch_required            BOOLEAN NOT NULL DEFAULT FALSE,
  last_authenticated_at_ms  BIGINT NOT NULL
);

-- inverted index over current rows.  Departs from the reference layout (docs/storage.md, "Commit
-- log layout"): row_id is COLLATE "C", so the primary key itself walks a scope value's row ids in
-- the byte order of bootstrap pages, and there is no by-row index: a row's entries are addressed
-- through the primary key from the scopes stored with the row (_sync_scopes), which they equal.
CREATE TABLE syncular.sync_row_scopes (
  partition  TEXT COLLATE "C" NOT NULL,
  tbl        TEXT COLLATE "C" NOT NULL,
  var        TEXT COLLATE "C" NOT NULL,
  value      TEXT COLLATE "C" NOT NULL,
  row_id     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, row_id)
);

CREATE TABLE syncular.sync_commits (
  partition         TEXT COLLATE "C" NOT NULL,
  commit_seq        BIGINT NOT NULL,
  client_id         TEXT COLLATE "C" NOT NULL,
  client_commit_id  TEXT COLLATE "C" NOT NULL,
  actor_id          TEXT NOT NULL,
  created_at_ms     BIGINT NOT NULL,
  writer_version    BIGINT,            -- RFC 0007 writer fence; must stay nullable, no default
  result            JSONB,             -- a pushed commit's stored result (idempotency, §6.3)
  tbl               TEXT COLLATE "C",  -- the change of a commit of one upsert (see below)
  row_id            TEXT COLLATE "C",
  op                SMALLINT,
  row_version       BIGINT,
  scopes            JSONB,
  payload           BYTEA,
  scope_var         TEXT COLLATE "C",
  scope_value       TEXT COLLATE "C",
  PRIMARY KEY (partition, commit_seq)
);
-- a pushed commit's stored result is in its row (no sync_push_results row), found by this index;
-- no (partition, created_at_ms) index: prune by age walks the primary key (departures from the
-- reference layout, docs/storage.md "Commit log layout")
--#include indexes/sync_commits_by_client_commit/0.6.0.sql
-- A pushed commit of one upsert whose scopes are one (variable, value) pair keeps that change in
-- its commit row (tbl .. payload, as in sync_changes, idx 0), and its scope index entry too
-- (scope_var, scope_value), indexed here: no sync_changes row, no sync_change_scopes row
-- (docs/storage.md "Commit log layout"); the view syncular.changes shows every change.
--#include indexes/sync_commits_by_scope/0.7.0.sql

CREATE TABLE syncular.sync_changes (
  partition    TEXT COLLATE "C" NOT NULL,
  commit_seq   BIGINT NOT NULL,
  idx          INTEGER NOT NULL,
  tbl          TEXT COLLATE "C" NOT NULL,
  row_id       TEXT COLLATE "C" NOT NULL,
  op           SMALLINT NOT NULL,      -- 1 = upsert, 2 = delete
  row_version  BIGINT,
  scopes       JSONB NOT NULL,
  payload      BYTEA,
  PRIMARY KEY (partition, commit_seq, idx)
);
-- no (partition, commit_seq, tbl, idx) index (a departure from the reference layout,
-- docs/storage.md): a pull reads a commit's changes through the primary key and skips other
-- tables' changes by the heap tuple's tbl.

-- inverted index over the log
CREATE TABLE syncular.sync_change_scopes (
  partition   TEXT COLLATE "C" NOT NULL,
  tbl         TEXT COLLATE "C" NOT NULL,
  var         TEXT COLLATE "C" NOT NULL,
  value       TEXT COLLATE "C" NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, commit_seq)
);

-- idempotency records (§6.3)
CREATE TABLE syncular.sync_push_results (
  partition         TEXT COLLATE "C" NOT NULL,
  client_id         TEXT COLLATE "C" NOT NULL,
  client_commit_id  TEXT COLLATE "C" NOT NULL,
  result            JSONB NOT NULL,
  PRIMARY KEY (partition, client_id, client_commit_id)
);

-- durable reactions (§6.9)
CREATE TABLE syncular.sync_reactions (
  partition                TEXT COLLATE "C" NOT NULL,
  idempotency_key          TEXT COLLATE "C" NOT NULL,
  type                     TEXT NOT NULL,
  version                  INTEGER NOT NULL,
  payload                  JSONB NOT NULL,
  source_client_id         TEXT NOT NULL,
  source_client_commit_id  TEXT NOT NULL,
  source_commit_seq        BIGINT NOT NULL,
  created_at_ms            BIGINT NOT NULL,
  available_at_ms          BIGINT NOT NULL,
  status                   TEXT COLLATE "C" NOT NULL
    CHECK (status IN ('pending', 'leased', 'completed', 'dead-letter')),
  attempts                 INTEGER NOT NULL,
  max_attempts             INTEGER NOT NULL,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB,
  PRIMARY KEY (partition, idempotency_key)
);
--#include indexes/sync_reactions_due/0.1.0.sql
--#include indexes/sync_reactions_lease/0.1.0.sql
--#include indexes/sync_reactions_completed/0.1.0.sql
--#include indexes/sync_reactions_dead_letter/0.1.0.sql

-- client records (§4.5)
CREATE TABLE syncular.sync_clients (
  partition      TEXT COLLATE "C" NOT NULL,
  client_id      TEXT COLLATE "C" NOT NULL,
  actor_id       TEXT NOT NULL,
  wire_version   INTEGER NOT NULL DEFAULT 1,
  cursor         BIGINT NOT NULL,
  subscriptions  JSONB NOT NULL,
  updated_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id)
);

CREATE TABLE syncular.sync_blob_refs (
  partition  TEXT COLLATE "C" NOT NULL,
  tbl        TEXT COLLATE "C" NOT NULL,
  row_id     TEXT COLLATE "C" NOT NULL,
  blob_id    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (partition, tbl, row_id, blob_id)
);
--#include indexes/sync_blob_refs_by_blob/0.1.0.sql

CREATE TABLE syncular.sync_tombstones (
  partition   TEXT COLLATE "C" NOT NULL,
  tbl         TEXT COLLATE "C" NOT NULL,
  row_id      TEXT COLLATE "C" NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, row_id)
);

-- RFC 0007 backfill checkpoints
CREATE TABLE syncular.sync_backfill_checkpoints (
  partition       TEXT COLLATE "C" NOT NULL,
  name            TEXT COLLATE "C" NOT NULL,
  schema_version  INTEGER NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('declared', 'backfilling', 'activated')),
  watermark       BIGINT NOT NULL DEFAULT 0,
  owner_epoch     BIGINT NOT NULL DEFAULT 0,
  observed_rows   BIGINT NOT NULL DEFAULT 0,
  updated_at_ms   BIGINT NOT NULL,
  PRIMARY KEY (partition, name)
);

-- RFC 0007 writer fence
CREATE TABLE syncular.sync_writer_fence (
  partition                TEXT COLLATE "C" PRIMARY KEY,
  required_writer_version  INTEGER NOT NULL
);

--#include tables/sync_schema_meta/0.1.0.sql

-- Refuses a sync_commits insert whose writer_version is NULL or below the partition's fence
-- (src/fence.c: one probe of sync_writer_fence's primary key per appended commit).
-- The message text is the host code (reference behaviour); the SQLSTATE and JSON detail make it
-- a clear error for SQL callers (shared/reference/barrier-rfc0007.md, "Writer fence").  The DETAIL is
-- the catalogue form {"code": ..., "details": ...} (jsonb text, as syncular._raise writes it), so the
-- engine recognizes the refusal as this extension's own error.
--#include udfs/syncular_writer_fence/0.5.0.sql
--#include udfs/syncular_writer_fence/0.2.0.comment.sql

--#include triggers/sync_commits_writer_fence/0.1.0.sql

-- ---------------------------------------------------------------------------------------------
-- Extension-owned configuration (not part of the reference layout).

--#include tables/sync_settings/0.1.0.sql

--#include tables/sync_row_validators/0.1.0.sql

-- pg_dump keeps the data of every catalog table.
--#include config_dump/sync_partitions/0.1.0.sql

-- App roles get EXECUTE on the SQL surface, never raw writes to the catalog.
REVOKE ALL ON ALL TABLES IN SCHEMA syncular FROM PUBLIC;

--#include comments/sync_partitions/0.7.0.sql
--#include comments/sync_partition_registry/0.2.0.sql
--#include comments/sync_row_scopes/0.6.0.sql
--#include comments/sync_commits/0.7.0.sql
--#include comments/sync_changes/0.2.0.sql
--#include comments/sync_change_scopes/0.7.0.sql
--#include comments/sync_push_results/0.6.0.sql
--#include comments/sync_reactions/0.2.0.sql
--#include comments/sync_clients/0.2.0.sql
--#include comments/sync_blob_refs/0.2.0.sql
--#include comments/sync_tombstones/0.2.0.sql
--#include comments/sync_backfill_checkpoints/0.2.0.sql
--#include comments/sync_writer_fence/0.2.0.sql
--#include comments/sync_schema_meta/0.2.0.sql
--#include comments/sync_settings/0.2.0.sql
--#include comments/sync_row_validators/0.2.0.sql
