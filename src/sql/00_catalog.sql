-- syncular install script, part 00: the catalog.
-- The core tables keep the reference PostgreSQL layout (shared/reference/data-model-and-storage.md,
-- "PostgreSQL core tables"): names, columns, types, keys and indexes.  They live in the extension
-- schema `syncular`; synced app tables live in the app schema recorded in sync_settings.

\echo Use "CREATE EXTENSION syncular" to load this file. \quit

-- per-partition counters; the push serializes on this row (FOR UPDATE) and the schema bump takes
-- LOCK TABLE ... IN EXCLUSIVE MODE on it.
CREATE TABLE syncular.sync_partitions (
  partition       TEXT PRIMARY KEY,
  max_commit_seq  BIGINT NOT NULL DEFAULT 0,
  horizon_seq     BIGINT NOT NULL DEFAULT 0
);

-- holds the log epoch (§2.1)
CREATE TABLE syncular.sync_partition_registry (
  partition                 TEXT PRIMARY KEY,
  log_epoch                 TEXT NOT NULL,
  epoch_required            BOOLEAN NOT NULL DEFAULT FALSE,
  last_authenticated_at_ms  BIGINT NOT NULL
);

-- inverted index over current rows.  Departs from the reference layout (docs/storage.md, "Commit
-- log layout"): row_id is COLLATE "C", so the primary key itself walks a scope value's row ids in
-- the byte order of bootstrap pages, and there is no by-row index: a row's entries are addressed
-- through the primary key from the scopes stored with the row (_sync_scopes), which they equal.
CREATE TABLE syncular.sync_row_scopes (
  partition  TEXT NOT NULL,
  tbl        TEXT NOT NULL,
  var        TEXT NOT NULL,
  value      TEXT NOT NULL,
  row_id     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, row_id)
);

CREATE TABLE syncular.sync_commits (
  partition         TEXT NOT NULL,
  commit_seq        BIGINT NOT NULL,
  client_id         TEXT NOT NULL,
  client_commit_id  TEXT NOT NULL,
  actor_id          TEXT NOT NULL,
  created_at_ms     BIGINT NOT NULL,
  writer_version    BIGINT,            -- RFC 0007 writer fence; must stay nullable, no default
  PRIMARY KEY (partition, commit_seq)
);
CREATE INDEX sync_commits_by_time ON syncular.sync_commits (partition, created_at_ms);

CREATE TABLE syncular.sync_changes (
  partition    TEXT NOT NULL,
  commit_seq   BIGINT NOT NULL,
  idx          INTEGER NOT NULL,
  tbl          TEXT NOT NULL,
  row_id       TEXT NOT NULL,
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
  partition   TEXT NOT NULL,
  tbl         TEXT NOT NULL,
  var         TEXT NOT NULL,
  value       TEXT NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, commit_seq)
);

-- idempotency records (§6.3)
CREATE TABLE syncular.sync_push_results (
  partition         TEXT NOT NULL,
  client_id         TEXT NOT NULL,
  client_commit_id  TEXT NOT NULL,
  result            JSONB NOT NULL,
  PRIMARY KEY (partition, client_id, client_commit_id)
);

-- durable reactions (§6.9)
CREATE TABLE syncular.sync_reactions (
  partition                TEXT NOT NULL,
  idempotency_key          TEXT NOT NULL,
  type                     TEXT NOT NULL,
  version                  INTEGER NOT NULL,
  payload                  JSONB NOT NULL,
  source_client_id         TEXT NOT NULL,
  source_client_commit_id  TEXT NOT NULL,
  source_commit_seq        BIGINT NOT NULL,
  created_at_ms            BIGINT NOT NULL,
  available_at_ms          BIGINT NOT NULL,
  status                   TEXT NOT NULL
    CHECK (status IN ('pending', 'leased', 'completed', 'dead-letter')),
  attempts                 INTEGER NOT NULL,
  max_attempts             INTEGER NOT NULL,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB,
  PRIMARY KEY (partition, idempotency_key)
);
CREATE INDEX sync_reactions_due ON syncular.sync_reactions
  (partition, status, available_at_ms, created_at_ms, idempotency_key);
CREATE INDEX sync_reactions_lease ON syncular.sync_reactions (partition, status, lease_expires_at_ms);
CREATE INDEX sync_reactions_completed ON syncular.sync_reactions
  (partition, status, completed_at_ms, idempotency_key);
CREATE INDEX sync_reactions_dead_letter ON syncular.sync_reactions
  (partition, status, available_at_ms, idempotency_key);

-- client records (§4.5)
CREATE TABLE syncular.sync_clients (
  partition      TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  actor_id       TEXT NOT NULL,
  wire_version   INTEGER NOT NULL DEFAULT 1,
  cursor         BIGINT NOT NULL,
  subscriptions  JSONB NOT NULL,
  updated_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id)
);

CREATE TABLE syncular.sync_blob_refs (
  partition  TEXT NOT NULL,
  tbl        TEXT NOT NULL,
  row_id     TEXT NOT NULL,
  blob_id    TEXT NOT NULL,
  PRIMARY KEY (partition, tbl, row_id, blob_id)
);
CREATE INDEX sync_blob_refs_by_blob ON syncular.sync_blob_refs (partition, blob_id);

CREATE TABLE syncular.sync_tombstones (
  partition   TEXT NOT NULL,
  tbl         TEXT NOT NULL,
  row_id      TEXT NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, row_id)
);

-- RFC 0007 backfill checkpoints
CREATE TABLE syncular.sync_backfill_checkpoints (
  partition       TEXT NOT NULL,
  name            TEXT NOT NULL,
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
  partition                TEXT PRIMARY KEY,
  required_writer_version  INTEGER NOT NULL
);

-- the schema marker (singleton)
CREATE TABLE syncular.sync_schema_meta (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  schema_version  BIGINT NOT NULL,
  layouts         TEXT NOT NULL DEFAULT '{}'
);

-- Refuses a sync_commits insert whose writer_version is NULL or below the partition's fence
-- (src/fence.c: one probe of sync_writer_fence's primary key per appended commit).
-- The message text is the host code (reference behaviour); the SQLSTATE and JSON detail make it
-- a clear error for SQL callers (shared/reference/barrier-rfc0007.md, "Writer fence").  The DETAIL is
-- the catalogue form {"code": ..., "details": ...} (jsonb text, as syncular._raise writes it), so the
-- engine recognizes the refusal as this extension's own error.
CREATE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_writer_fence';
COMMENT ON FUNCTION syncular.syncular_writer_fence() IS
'Trigger function of sync_commits_writer_fence (BEFORE INSERT on syncular.sync_commits; RFC 0007 writer fence): '
'refuses a commit whose writer_version is NULL or below '
'sync_writer_fence.required_writer_version for its partition, raising sync.storage.writer_fence_rejected '
'(SQLSTATE P0001, message = the code, DETAIL {"code": "sync.storage.writer_fence_rejected", "details": '
'{"partition", "writerVersion", "requiredWriterVersion"}}, the catalogue form). Partitions without a fence row are '
'not fenced. Through the engine: raised as is by syncular.handle / syncular.push / CALL syncular.sync; '
'syncular.handle_http answers 500 sync.internal_error with a fixed message.';

CREATE TRIGGER sync_commits_writer_fence BEFORE INSERT ON syncular.sync_commits
  FOR EACH ROW EXECUTE FUNCTION syncular.syncular_writer_fence();

-- ---------------------------------------------------------------------------------------------
-- Extension-owned configuration (not part of the reference layout).

-- The registered app schema and its compiled form (see docs/compiled-schema.md), plus the hooks.
-- `compiled` is written only by ensure_schema; the C engine reads it once per schema change.
CREATE TABLE syncular.sync_settings (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  app_schema        TEXT,              -- NULL until ensure_schema registers the app schema
  compiled          JSONB,
  scope_resolver    REGPROCEDURE,
  commit_validator  REGPROCEDURE,
  reaction_planner  REGPROCEDURE
);

CREATE TABLE syncular.sync_row_validators (
  tbl  TEXT PRIMARY KEY,
  fn   REGPROCEDURE NOT NULL
);

-- pg_dump keeps the data of every catalog table.
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_partitions', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_partition_registry', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_row_scopes', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_commits', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_changes', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_change_scopes', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_push_results', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_reactions', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_clients', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_refs', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_tombstones', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_backfill_checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_writer_fence', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_schema_meta', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_settings', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_row_validators', '');

-- App roles get EXECUTE on the SQL surface, never raw writes to the catalog.
REVOKE ALL ON ALL TABLES IN SCHEMA syncular FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- What each catalog table holds (psql \dt+ syncular.*).  Writers are the engine and the SQL
-- surface; app roles never write them (90_grants.sql).
COMMENT ON TABLE syncular.sync_partitions IS
'One row per partition (tenant): max_commit_seq = the last commit sequence appended, horizon_seq = the pruning horizon (SPEC §4.6: a cursor below it resets). Every push locks its row FOR UPDATE; ensure_schema and unregister_schema take LOCK TABLE IN EXCLUSIVE MODE.';
COMMENT ON TABLE syncular.sync_partition_registry IS
'The log epoch of each partition (SPEC §2.1): a client whose logEpoch differs is told to reset. Written on first use of a partition and by syncular.rotate_log_epoch; last_authenticated_at_ms = the last authenticated round, to within a second (a round rewrites it only when it is at least 1 s old).';
COMMENT ON TABLE syncular.sync_row_scopes IS
'Inverted index over the current synced rows: one row per (partition, table, scope variable, value, row id); bootstrap pages walk its primary key (row_id COLLATE "C": row ids in byte order). Kept in step with the synced tables by the engine: the entries of a row are exactly its stored _sync_scopes, and writers find a row''s entries from those.';
COMMENT ON TABLE syncular.sync_commits IS
'The commit log (SPEC §2.1): one row per applied commit, (partition, commit_seq) with the client, clientCommitId, actor and time; writer_version is the RFC 0007 writer fence value (trigger sync_commits_writer_fence). Pruned by syncular.prune.';
COMMENT ON TABLE syncular.sync_changes IS
'The changes of each logged commit (SPEC §2.2), in order (idx): table, row id, op (1 upsert, 2 delete), row version, stored scopes and the full-row payload; incremental pulls serve them. Pruned with their commit.';
COMMENT ON TABLE syncular.sync_change_scopes IS
'Inverted index over the log: which commits changed rows of a (table, scope variable, value), for incremental pulls. Pruned with the log.';
COMMENT ON TABLE syncular.sync_push_results IS
'Idempotency records (SPEC §2.3, §6.3): the outcome of each pushed (client, clientCommitId), applied or rejected, replayed unchanged to a retry. Kept by default; syncular.prune drops them only when asked (pushResultsOlderThanMs).';
COMMENT ON TABLE syncular.sync_reactions IS
'Durable reactions (SPEC §6.9) planned by the reaction planner in the commit transaction and drained by claim_reactions / complete_reaction / fail_reaction: status pending, leased, completed or dead-letter, with leases, attempts and backoff. View: syncular.reactions.';
COMMENT ON TABLE syncular.sync_clients IS
'Client records (SPEC §4.5): per (partition, client id) the bound actor, wire version, last cursor, subscriptions and time of the last round (a round that pushes only rewrites an unchanged record only when updated_at_ms is at least 1 s old). A client id bound to another actor is refused. View: syncular.clients.';
COMMENT ON TABLE syncular.sync_blob_refs IS
'The blob reference index (SPEC §5.9.4): the blob ids referenced by blob_ref values of current rows, per (partition, table, row id); replaced by every applied upsert, removed with the row. Read by blob_get (download authorization) and blob_gc (orphans).';
COMMENT ON TABLE syncular.sync_tombstones IS
'Tombstones of deleted rows (delete precedence): the commit that deleted (partition, table, row id). An unversioned wire-3 upsert onto a tombstoned row answers sync.row_deleted; an insert clears it. Pruned with the log.';
COMMENT ON TABLE syncular.sync_backfill_checkpoints IS
'RFC 0007 backfill checkpoints per (partition, name): the schema version they gate, state declared / backfilling / activated, owner epoch, watermark and observed rows. A pending checkpoint refuses rounds with sync.schema_not_ready. API: declare/claim/advance/activate_checkpoint.';
COMMENT ON TABLE syncular.sync_writer_fence IS
'RFC 0007 writer fence: the lowest writer version allowed to append commits to a partition (trigger sync_commits_writer_fence). Raised by checkpoint declarations and schema bumps.';
COMMENT ON TABLE syncular.sync_schema_meta IS
'The stored schema marker (singleton id 1): the registered schema version and the stored column layouts of every synced table, checked by ensure_schema and readiness (barrier-rfc0007 storage checks).';
COMMENT ON TABLE syncular.sync_settings IS
'The registration (singleton id 1): the app schema holding the synced tables, the compiled schema the C engine reads (docs/compiled-schema.md), and the hooks: scope resolver, commit validator, reaction planner. Written by ensure_schema and the set_* functions; emptied by unregister_schema.';
COMMENT ON TABLE syncular.sync_row_validators IS
'The row validator of each synced table (docs/hooks.md), registered with syncular.set_row_validator.';
