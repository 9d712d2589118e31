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

-- inverted index over current rows
CREATE TABLE syncular.sync_row_scopes (
  partition  TEXT NOT NULL,
  tbl        TEXT NOT NULL,
  var        TEXT NOT NULL,
  value      TEXT NOT NULL,
  row_id     TEXT NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, row_id)
);
CREATE INDEX sync_row_scopes_by_row ON syncular.sync_row_scopes (partition, tbl, row_id);

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
CREATE INDEX sync_changes_by_table ON syncular.sync_changes (partition, commit_seq, tbl, idx);

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

-- Refuses a sync_commits insert whose writer_version is NULL or below the partition's fence.
-- The message text is the host code (reference behaviour); the SQLSTATE and JSON detail make it
-- a clear error for SQL callers (shared/reference/barrier-rfc0007.md, "Writer fence").  The DETAIL is
-- the catalogue form {"code": ..., "details": ...} (jsonb text, as syncular._raise writes it), so the
-- engine recognizes the refusal as this extension's own error.
CREATE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  required integer;
BEGIN
  SELECT f.required_writer_version INTO required
    FROM syncular.sync_writer_fence f WHERE f.partition = NEW.partition;
  IF FOUND AND (NEW.writer_version IS NULL OR NEW.writer_version < required) THEN
    RAISE EXCEPTION 'sync.storage.writer_fence_rejected'
      USING ERRCODE = 'P0001',
            DETAIL = jsonb_build_object('code', 'sync.storage.writer_fence_rejected',
                       'details', jsonb_build_object('partition', NEW.partition,
                         'writerVersion', NEW.writer_version,
                         'requiredWriterVersion', required))::text;
  END IF;
  RETURN NEW;
END
$$;
COMMENT ON FUNCTION syncular.syncular_writer_fence() IS
'Trigger function of sync_commits_writer_fence (BEFORE INSERT on syncular.sync_commits; RFC 0007 writer fence, '
'barrier-rfc0007.md §5): refuses a commit whose writer_version is NULL or below '
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

-- Bootstrap pages walk row ids in byte order (COLLATE "C", a project decision); this index
-- serves that order whatever the database's default collation.
CREATE INDEX sync_row_scopes_paging ON syncular.sync_row_scopes
  (partition, tbl, var, value, row_id COLLATE "C");
-- syncular install script, part 05: the error catalogue (src/errors.c).

CREATE FUNCTION syncular._raise(code text, message text, details jsonb DEFAULT NULL)
RETURNS void LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_raise';
COMMENT ON FUNCTION syncular._raise(text, text, jsonb) IS
'Internal. Raises a catalogue code as an ERROR: SQLSTATE from the catalogue (see syncular.error_catalog()), '
'message as given, DETAIL = {"code": code, "details": details}. Used by the plpgsql parts of the extension.';

CREATE FUNCTION syncular.error_catalog(
  OUT code text, OUT category text, OUT retryable boolean, OUT recommended_action text,
  OUT http_status integer, OUT sqlstate text)
RETURNS SETOF record LANGUAGE C STABLE AS 'MODULE_PATHNAME', 'syncular_error_catalog';
COMMENT ON FUNCTION syncular.error_catalog() IS
'The Syncular error catalogue as this extension uses it (shared/reference/errors.md §3 and §4): one row per code '
'with category, retryable, recommendedAction, HTTP status (NULL for host sync.storage.* codes, which never travel '
'on the wire) and the SQLSTATE used when the code is raised. Never raises.';
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

-- The string member `key` of `j`, or NULL when absent or not a JSON string.
CREATE FUNCTION syncular._jstr(j jsonb, key text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(j -> key) = 'string' THEN j ->> key END
$$;
COMMENT ON FUNCTION syncular._jstr(jsonb, text) IS
  'Internal. The JSON-string member `key` of object `j`, or NULL when it is absent or not a string. Raises nothing.';

-- Raises sync.storage.schema_invalid with details {table?, column?, <extra>..., rule}.
CREATE FUNCTION syncular._schema_invalid(message text, rule text, tbl text DEFAULT NULL,
                                         col text DEFAULT NULL, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.schema_invalid', message,
            jsonb_strip_nulls(jsonb_build_object('table', tbl, 'column', col))
            || coalesce(extra, '{}'::jsonb)
            || jsonb_build_object('rule', rule));
END
$$;
COMMENT ON FUNCTION syncular._schema_invalid(text, text, text, text, jsonb) IS
  'Internal. Always raises sync.storage.schema_invalid (SQLSTATE 22023) with the fixed `message` and details {table?, column?, ...extra, rule}. data-model-and-storage.md §2.';

-- Identifier rules (§2.2): non-empty, at most 63 UTF-8 bytes, no `sync_` / `_sync` prefix.
CREATE FUNCTION syncular._check_identifier(name text, tbl text, col text, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF name IS NULL OR name = '' THEN
    PERFORM syncular._schema_invalid('identifier is missing or empty', 'identifier_empty', tbl, col, extra);
  END IF;
  IF octet_length(name) > 63 THEN
    PERFORM syncular._schema_invalid('identifier is longer than 63 UTF-8 bytes', 'identifier_too_long',
                                     tbl, col, extra);
  END IF;
  IF starts_with(name, 'sync_') OR starts_with(name, '_sync') THEN
    PERFORM syncular._schema_invalid('identifier uses a reserved prefix (sync_ or _sync)',
                                     'identifier_reserved', tbl, col, extra);
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._check_identifier(text, text, text, jsonb) IS
  'Internal. Checks one table, column or index name: non-empty, <= 63 UTF-8 bytes, no sync_ or _sync prefix (case-sensitive, as the reference). Raises sync.storage.schema_invalid (22023) with rule identifier_empty | identifier_too_long | identifier_reserved. data-model-and-storage.md §2.2.';

-- C helpers (src/layout.c)
CREATE FUNCTION syncular._payload_append_nulls(payload bytea, old_ncols integer, new_ncols integer)
RETURNS bytea
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'syncular_payload_append_nulls';
COMMENT ON FUNCTION syncular._payload_append_nulls(bytea, integer, integer) IS
  'Internal. Re-encodes a full-row codec payload (wire-format.md §4.2) of old_ncols columns for new_ncols columns, the appended columns NULL: the null bitmap (ceil(n/8) bytes, LSB first, bit set = NULL) is widened and bits old_ncols..new_ncols-1 set; the values are copied unchanged. Errors: 22023 when new_ncols < old_ncols, old_ncols < 0 or new_ncols > 65535; XX001 when the payload is shorter than its bitmap or has a set padding bit. data-model-and-storage.md §7 step 5.';

CREATE FUNCTION syncular._fnv1a64_hex(name text) RETURNS text
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'syncular_fnv1a64_hex';
COMMENT ON FUNCTION syncular._fnv1a64_hex(text) IS
  'Internal. The FNV-1a-64 hash of the UTF-8 bytes of `name` as 16 lowercase hex digits. Raises nothing. data-model-and-storage.md §6 (physical index names).';

-- `sync_ix_<name>`, or `sync_ix_<16-hex FNV-1a-64 of name>` when that exceeds 63 bytes (§6).
CREATE FUNCTION syncular._physical_index_name(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN octet_length('sync_ix_' || name) > 63
              THEN 'sync_ix_' || syncular._fnv1a64_hex(name)
              ELSE 'sync_ix_' || name END
$$;
COMMENT ON FUNCTION syncular._physical_index_name(text) IS
  'Internal. Physical name of a declared index: sync_ix_<name>, or sync_ix_<16-hex FNV-1a-64 of name> when that exceeds 63 UTF-8 bytes. Raises nothing. data-model-and-storage.md §6.';

-- PostgreSQL projection type of a schema column type (§6).
CREATE FUNCTION syncular._pg_type(coltype text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE coltype
    WHEN 'string' THEN 'text' WHEN 'blob_ref' THEN 'text'
    WHEN 'integer' THEN 'bigint' WHEN 'float' THEN 'double precision'
    WHEN 'boolean' THEN 'boolean' WHEN 'json' THEN 'jsonb'
    WHEN 'bytes' THEN 'bytea' WHEN 'crdt' THEN 'bytea' END
$$;
COMMENT ON FUNCTION syncular._pg_type(text) IS
  'Internal. PostgreSQL projection type of a schema column type: string/blob_ref -> text, integer -> bigint, float -> double precision, boolean -> boolean, json -> jsonb, bytes/crdt -> bytea; NULL for an unknown type. data-model-and-storage.md §6.';

-- ---------------------------------------------------------------------------------------------
-- compile: IR -> compiled schema (docs/compiled-schema.md)

CREATE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_version     jsonb;
  v_tables      jsonb;
  t             jsonb;
  tname         text;
  tnames        text[] := '{}';
  c             jsonb;
  cname         text;
  ctype         text;
  cnull         boolean;
  cenc          boolean;
  ccrdt         text;
  cols          jsonb;
  colnames      text[];
  pk            text;
  pk_idx        integer;
  s             jsonb;
  pattern       text;
  m             text[];
  svar          text;
  scol          text;
  sidx          integer;
  scopes        jsonb;
  tvars         text[];
  tscols        text[];
  var_cols      jsonb := '{}';       -- variable -> column, across the whole schema
  ix            jsonb;
  ixname        text;
  ixcols        jsonb;
  ixcol         jsonb;
  indexes       jsonb;
  ixnames       text[] := '{}';      -- declared index names, across the whole schema
  mat           boolean;
  compiled_tbls jsonb := '[]';
  raw_refs      jsonb := '{}';       -- table -> raw references array (checked in pass 2)
  r             jsonb;
  rcol          text;
  rcol_idx      integer;
  rparent       text;
  parent        jsonb;
  ondel         text;
  refs          jsonb;
  refcols       text[];
  i             integer;
  v_out         jsonb;
BEGIN
  IF ir IS NULL OR jsonb_typeof(ir) <> 'object' THEN
    PERFORM syncular._schema_invalid('schema IR must be a JSON object', 'shape');
  END IF;

  -- the two input shapes differ in the version member and in the scope notation
  IF ir ? 'irVersion' THEN
    IF ir -> 'irVersion' <> '1'::jsonb THEN
      PERFORM syncular._schema_invalid('unsupported irVersion (only 1 is known)', 'ir_version');
    END IF;
    v_version := ir -> 'schemaVersion';
  ELSE
    v_version := ir -> 'version';
  END IF;
  IF v_version IS NULL OR jsonb_typeof(v_version) <> 'number'
     OR v_version::text::numeric <> trunc(v_version::text::numeric)
     OR v_version::text::numeric < 1 OR v_version::text::numeric > 2147483647 THEN
    PERFORM syncular._schema_invalid('schema version must be an integer between 1 and 2147483647',
                                     'version');
  END IF;

  v_tables := ir -> 'tables';
  IF v_tables IS NULL OR jsonb_typeof(v_tables) <> 'array' THEN
    PERFORM syncular._schema_invalid('schema IR must have a tables array', 'tables');
  END IF;

  -- pass 1: tables, columns, primary key, scopes, indexes
  FOR t IN SELECT value FROM jsonb_array_elements(v_tables) WITH ORDINALITY ORDER BY ordinality LOOP
    IF jsonb_typeof(t) <> 'object' THEN
      PERFORM syncular._schema_invalid('a table must be a JSON object', 'table_shape');
    END IF;
    tname := syncular._jstr(t, 'name');
    PERFORM syncular._check_identifier(tname, tname, NULL);
    IF tname = ANY (tnames) THEN
      PERFORM syncular._schema_invalid('duplicate table name', 'duplicate_table', tname);
    END IF;
    tnames := tnames || tname;

    -- columns
    IF jsonb_typeof(t -> 'columns') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'columns') = 0 THEN
      PERFORM syncular._schema_invalid('a table must have a non-empty columns array', 'columns', tname);
    END IF;
    cols := '[]';
    colnames := '{}';
    FOR c IN SELECT value FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(c) <> 'object' THEN
        PERFORM syncular._schema_invalid('a column must be a JSON object', 'column_shape', tname);
      END IF;
      cname := syncular._jstr(c, 'name');
      PERFORM syncular._check_identifier(cname, tname, cname);
      IF cname = ANY (colnames) THEN
        PERFORM syncular._schema_invalid('duplicate column name', 'duplicate_column', tname, cname);
      END IF;
      colnames := colnames || cname;
      ctype := syncular._jstr(c, 'type');
      IF ctype IS NULL OR syncular._pg_type(ctype) IS NULL THEN
        PERFORM syncular._schema_invalid('unknown column type', 'column_type', tname, cname,
                                         jsonb_build_object('type', c -> 'type'));
      END IF;
      IF jsonb_typeof(c -> 'nullable') IS DISTINCT FROM 'boolean' THEN
        PERFORM syncular._schema_invalid('column nullable must be a boolean', 'column_nullable',
                                         tname, cname);
      END IF;
      cnull := (c -> 'nullable')::text::boolean;
      IF coalesce(jsonb_typeof(c -> 'encrypted'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('column encrypted must be a boolean', 'column_encrypted',
                                         tname, cname);
      END IF;
      cenc := coalesce((c ->> 'encrypted')::boolean, false);
      ccrdt := NULL;
      IF ctype = 'crdt' THEN
        IF cenc THEN
          PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                           tname, cname);
        END IF;
        IF syncular._jstr(c, 'crdtType') IS DISTINCT FROM 'yjs-doc' THEN
          PERFORM syncular._schema_invalid('a crdt column must declare crdtType yjs-doc', 'crdt_type',
                                           tname, cname);
        END IF;
        ccrdt := 'yjs-doc';
      ELSIF coalesce(jsonb_typeof(c -> 'crdtType'), 'null') <> 'null' THEN
        PERFORM syncular._schema_invalid('crdtType is only allowed on a crdt column', 'crdt_type',
                                         tname, cname);
      END IF;
      IF cenc AND syncular._jstr(c, 'declaredType') = 'crdt' THEN
        PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                         tname, cname);
      END IF;
      cols := cols || jsonb_build_array(jsonb_build_object(
                'name', cname,
                'type', CASE WHEN cenc THEN 'bytes' ELSE ctype END,
                'nullable', cnull,
                'crdtType', ccrdt,
                'encrypted', cenc));
    END LOOP;

    -- primary key
    pk := syncular._jstr(t, 'primaryKey');
    pk_idx := array_position(colnames, pk) - 1;
    IF pk IS NULL OR pk_idx IS NULL THEN
      PERFORM syncular._schema_invalid('primary key must name a column of the table', 'primary_key',
                                       tname, pk);
    END IF;
    IF (cols -> pk_idx -> 'encrypted')::text::boolean THEN
      PERFORM syncular._schema_invalid('the primary key cannot be encrypted', 'primary_key_encrypted',
                                       tname, pk);
    END IF;
    IF cols -> pk_idx ->> 'type' NOT IN ('string', 'integer', 'boolean', 'json') THEN
      PERFORM syncular._schema_invalid('primary key type must be string, integer, boolean or json',
                                       'primary_key_type', tname, pk,
                                       jsonb_build_object('type', cols -> pk_idx -> 'type'));
    END IF;

    -- scopes (declaration order)
    IF jsonb_typeof(t -> 'scopes') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'scopes') = 0 THEN
      PERFORM syncular._schema_invalid('a table must declare at least one scope', 'scopes_missing', tname);
    END IF;
    scopes := '[]';
    tvars := '{}';
    tscols := '{}';
    FOR s IN SELECT value FROM jsonb_array_elements(t -> 'scopes') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(s) = 'string' THEN
        pattern := s #>> '{}';
        scol := NULL;
        svar := NULL;
      ELSIF jsonb_typeof(s) = 'object' THEN
        pattern := syncular._jstr(s, 'pattern');
        scol := syncular._jstr(s, 'column');
        svar := syncular._jstr(s, 'variable');
        IF (s ? 'column' AND scol IS NULL) OR (s ? 'variable' AND svar IS NULL) THEN
          PERFORM syncular._schema_invalid('scope column and variable must be strings', 'scope_shape',
                                           tname);
        END IF;
      ELSE
        PERFORM syncular._schema_invalid('a scope must be a pattern string or an object with a pattern',
                                         'scope_shape', tname);
      END IF;
      m := regexp_match(pattern, '^([^{}]+):\{([^{}:]+)\}$');
      IF pattern IS NULL OR m IS NULL THEN
        PERFORM syncular._schema_invalid(
          'scope pattern must be prefix:{variable} with exactly one variable (no braces in the prefix, no braces or colons in the variable)',
          'scope_pattern', tname, NULL, jsonb_build_object('pattern', pattern));
      END IF;
      IF svar IS NOT NULL AND svar <> m[2] THEN
        PERFORM syncular._schema_invalid('scope variable does not match its pattern', 'scope_variable',
                                         tname, NULL, jsonb_build_object('pattern', pattern, 'variable', svar));
      END IF;
      svar := m[2];
      scol := coalesce(scol, svar);
      sidx := array_position(colnames, scol) - 1;
      IF sidx IS NULL THEN
        PERFORM syncular._schema_invalid('scope names no column of the table', 'scope_column',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      IF (cols -> sidx -> 'encrypted')::text::boolean THEN
        PERFORM syncular._schema_invalid('a scope column cannot be encrypted', 'scope_encrypted',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      -- one variable <-> exactly one column
      IF svar = ANY (tvars) OR scol = ANY (tscols)
         OR (var_cols ? svar AND var_cols ->> svar <> scol) THEN
        PERFORM syncular._schema_invalid('a scope variable must map to exactly one column',
                                         'scope_variable_column', tname, scol,
                                         jsonb_build_object('variable', svar));
      END IF;
      tvars := tvars || svar;
      tscols := tscols || scol;
      var_cols := var_cols || jsonb_build_object(svar, scol);
      scopes := scopes || jsonb_build_array(jsonb_build_object(
                  'pattern', m[1] || ':{' || m[2] || '}', 'prefix', m[1], 'variable', svar,
                  'column', scol, 'columnIndex', sidx));
    END LOOP;

    -- indexes
    IF coalesce(jsonb_typeof(t -> 'indexes'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('indexes must be an array', 'index_shape', tname);
    END IF;
    indexes := '[]';
    FOR ix IN SELECT value FROM jsonb_array_elements(coalesce(t -> 'indexes', '[]'))
                WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(ix) <> 'object' THEN
        PERFORM syncular._schema_invalid('an index must be a JSON object', 'index_shape', tname);
      END IF;
      ixname := syncular._jstr(ix, 'name');
      PERFORM syncular._check_identifier(ixname, tname, NULL, jsonb_build_object('index', ixname));
      IF ixname = ANY (ixnames) THEN
        PERFORM syncular._schema_invalid('duplicate index name', 'duplicate_index', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      ixnames := ixnames || ixname;
      ixcols := ix -> 'columns';
      IF jsonb_typeof(ixcols) IS DISTINCT FROM 'array' OR jsonb_array_length(ixcols) = 0 THEN
        PERFORM syncular._schema_invalid('an index must list at least one column', 'index_shape',
                                         tname, NULL, jsonb_build_object('index', ixname));
      END IF;
      FOR ixcol IN SELECT value FROM jsonb_array_elements(ixcols) LOOP
        IF jsonb_typeof(ixcol) <> 'string' OR NOT ((ixcol #>> '{}') = ANY (colnames)) THEN
          PERFORM syncular._schema_invalid('index names no column of the table', 'index_column',
                                           tname, ixcol #>> '{}', jsonb_build_object('index', ixname));
        END IF;
      END LOOP;
      IF (SELECT count(DISTINCT value) FROM jsonb_array_elements(ixcols)) <> jsonb_array_length(ixcols) THEN
        PERFORM syncular._schema_invalid('an index lists a column twice', 'index_column', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      IF coalesce(jsonb_typeof(ix -> 'unique'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('index unique must be a boolean', 'index_shape', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      indexes := indexes || jsonb_build_array(jsonb_build_object(
                   'name', ixname, 'columns', ixcols,
                   'unique', coalesce((ix ->> 'unique')::boolean, false),
                   'physical', syncular._physical_index_name(ixname)));
    END LOOP;

    -- materialize: default true, except when every non-PK, non-scope column is encrypted
    -- (decision: a table with no such column at all stays materialized)
    IF coalesce(jsonb_typeof(t -> 'materialize'), 'null') NOT IN ('null', 'boolean') THEN
      PERFORM syncular._schema_invalid('materialize must be a boolean', 'materialize', tname);
    END IF;
    IF jsonb_typeof(t -> 'materialize') = 'boolean' THEN
      mat := (t -> 'materialize')::text::boolean;
    ELSE
      SELECT NOT (count(*) > 0 AND bool_and((e.value -> 'encrypted')::text::boolean))
        INTO mat
        FROM jsonb_array_elements(cols) WITH ORDINALITY AS e(value, n)
       WHERE e.n - 1 <> pk_idx AND NOT ((e.value ->> 'name') = ANY (tscols));
    END IF;

    IF coalesce(jsonb_typeof(t -> 'references'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('references must be an array', 'reference_shape', tname);
    END IF;
    raw_refs := raw_refs || jsonb_build_object(tname, coalesce(t -> 'references', '[]'));

    compiled_tbls := compiled_tbls || jsonb_build_array(jsonb_build_object(
      'name', tname, 'materialize', mat, 'primaryKey', pk, 'pkIndex', pk_idx,
      'columns', cols, 'scopes', scopes, 'indexes', indexes, 'references', '[]'::jsonb));
  END LOOP;

  -- pass 2: declared references (§2.5); every table is known now
  FOR i IN 0 .. jsonb_array_length(compiled_tbls) - 1 LOOP
    t := compiled_tbls -> i;
    tname := t ->> 'name';
    SELECT array_agg(e ->> 'name' ORDER BY n) INTO colnames
      FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY AS x(e, n);
    refs := '[]';
    refcols := '{}';
    FOR r IN SELECT value FROM jsonb_array_elements(raw_refs -> tname) WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(r) <> 'object' THEN
        PERFORM syncular._schema_invalid('a reference must be a JSON object', 'reference_shape', tname);
      END IF;
      rcol := syncular._jstr(r, 'column');
      rcol_idx := array_position(colnames, rcol) - 1;
      IF rcol_idx IS NULL THEN
        PERFORM syncular._schema_invalid('reference names no column of the table', 'reference_column',
                                         tname, rcol);
      END IF;
      IF rcol = ANY (refcols) THEN
        PERFORM syncular._schema_invalid('a column declares more than one reference', 'duplicate_reference',
                                         tname, rcol);
      END IF;
      refcols := refcols || rcol;
      rparent := syncular._jstr(r, 'parentTable');
      SELECT e INTO parent FROM jsonb_array_elements(compiled_tbls) e WHERE e ->> 'name' = rparent;
      IF rparent IS NULL OR parent IS NULL THEN
        PERFORM syncular._schema_invalid('reference names an unknown parent table', 'reference_parent',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      IF parent -> 'columns' -> (parent ->> 'pkIndex')::int ->> 'type'
         IS DISTINCT FROM t -> 'columns' -> rcol_idx ->> 'type' THEN
        PERFORM syncular._schema_invalid('reference column type differs from the parent primary key type',
                                         'reference_type', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(parent -> 'scopes') e)
         IS DISTINCT FROM
         (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(t -> 'scopes') e) THEN
        PERFORM syncular._schema_invalid('a child table must declare the same scope patterns as its parent',
                                         'reference_scopes', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF r ? 'onDelete' AND jsonb_typeof(r -> 'onDelete') <> 'null' THEN
        ondel := lower(btrim(syncular._jstr(r, 'onDelete')));
      ELSE
        ondel := 'restrict';
      END IF;
      ondel := CASE ondel WHEN 'restrict' THEN 'restrict' WHEN 'cascade' THEN 'cascade'
                          WHEN 'set null' THEN 'set_null' WHEN 'set_null' THEN 'set_null' END;
      IF ondel IS NULL THEN
        PERFORM syncular._schema_invalid('reference onDelete must be restrict, cascade or set null',
                                         'reference_on_delete', tname, rcol,
                                         jsonb_build_object('onDelete', r -> 'onDelete'));
      END IF;
      IF ondel = 'set_null' AND NOT (t -> 'columns' -> rcol_idx -> 'nullable')::text::boolean THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL needs a nullable column', 'reference_set_null',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      -- a cascaded SET NULL keeps the row's stored scopes, so it must never clear a scope column
      IF ondel = 'set_null' AND EXISTS (SELECT 1 FROM jsonb_array_elements(t -> 'scopes') e
                                         WHERE e ->> 'column' = rcol) THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL cannot clear a scope column',
                                         'reference_set_null_scope', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      refs := refs || jsonb_build_array(jsonb_build_object(
                'column', rcol, 'columnIndex', rcol_idx, 'parentTable', rparent, 'onDelete', ondel));
    END LOOP;
    compiled_tbls := jsonb_set(compiled_tbls, ARRAY[i::text, 'references'], refs);
  END LOOP;

  v_out := jsonb_build_object('version', v_version::text::integer, 'appSchema', app_schema,
                              'tables', compiled_tbls);

  -- physical index names (declared and reference indexes) must not collide
  IF (SELECT count(*) <> count(DISTINCT physical) FROM syncular._index_plan(v_out)) THEN
    PERFORM syncular._schema_invalid('two indexes map to the same physical index name',
                                     'duplicate_index');
  END IF;
  RETURN v_out;
END
$$;

-- Every physical index of the compiled schema: the declared indexes of materialized tables, then
-- one non-unique index per reference child column (materialized tables only; skipped when a
-- declared index already leads with that column).
CREATE FUNCTION syncular._index_plan(compiled jsonb)
RETURNS TABLE (tbl text, physical text, columns text[], is_unique boolean)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT t.value ->> 'name', ix.value ->> 'physical',
         ARRAY(SELECT jsonb_array_elements_text(ix.value -> 'columns')),
         (ix.value -> 'unique')::text::boolean
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, tn)
    CROSS JOIN LATERAL jsonb_array_elements(t.value -> 'indexes') WITH ORDINALITY AS ix(value, n)
   WHERE (t.value -> 'materialize')::text::boolean
  UNION ALL
  SELECT t.value ->> 'name',
         syncular._physical_index_name('ref_' || (t.value ->> 'name') || '_' || (r.value ->> 'column')),
         ARRAY[r.value ->> 'column'], false
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, tn)
    CROSS JOIN LATERAL jsonb_array_elements(t.value -> 'references') WITH ORDINALITY AS r(value, n)
   WHERE (t.value -> 'materialize')::text::boolean
     AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(t.value -> 'indexes') d
                      WHERE d.value -> 'columns' ->> 0 = r.value ->> 'column')
$$;
COMMENT ON FUNCTION syncular._index_plan(jsonb) IS
  'Internal. Every physical index ensure_schema builds for a compiled schema: (table, physical name, columns after _sync_partition, unique). Declared indexes of materialized tables (sync_ix_<name>), then one non-unique sync_ix_ref_<table>_<column> (FNV-hashed past 63 bytes) per reference child column not already leading a declared index. Raises nothing. data-model-and-storage.md §2.5, §6.';

COMMENT ON FUNCTION syncular._compile_schema(jsonb, text) IS
  'Internal. Compiles a schema IR (typegen irVersion 1: schemaVersion, scopes {pattern, variable, column}; or the plain server shape: version, scopes "prefix:{variable}" or {pattern, column}) into the normalized object of docs/compiled-schema.md, with appSchema = app_schema. Applies every compile-time rule of data-model-and-storage.md §2.2, §2.3, §2.4, §2.5; a failure raises sync.storage.schema_invalid (SQLSTATE 22023) with details {table?, column?, rule, ...}. Writes nothing.';

-- The layouts JSON text of the marker (§4 sync_schema_meta): {"<table>":[{"name":..,"type":..,
-- "nullable":..},...],...} in compiled order, compact, nothing else.
CREATE FUNCTION syncular._layouts_text(compiled jsonb) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT '{' || coalesce(string_agg(to_json(t.value ->> 'name')::text || ':[' ||
           (SELECT coalesce(string_agg(format('{"name":%s,"type":%s,"nullable":%s}',
                                              to_json(c.value ->> 'name')::text,
                                              to_json(c.value ->> 'type')::text,
                                              c.value ->> 'nullable'), ',' ORDER BY c.n), '')
              FROM jsonb_array_elements(t.value -> 'columns') WITH ORDINALITY AS c(value, n))
           || ']', ',' ORDER BY t.n), '') || '}'
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, n)
$$;
COMMENT ON FUNCTION syncular._layouts_text(jsonb) IS
  'Internal. The sync_schema_meta.layouts text of a compiled schema: a compact JSON object, table -> [{name, type, nullable}] in compiled table and column order, nothing else. Raises nothing. data-model-and-storage.md §4 (sync_schema_meta).';

-- Parses stored layouts text; anything unreadable or not an object counts as {} (reference).
CREATE FUNCTION syncular._parse_layouts(layouts text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  j jsonb;
BEGIN
  BEGIN
    j := layouts::jsonb;
  EXCEPTION WHEN others THEN
    RETURN '{}'::jsonb;
  END;
  IF j IS NULL OR jsonb_typeof(j) <> 'object' THEN
    RETURN '{}'::jsonb;
  END IF;
  RETURN j;
END
$$;
COMMENT ON FUNCTION syncular._parse_layouts(text) IS
  'Internal. Stored sync_schema_meta.layouts text as a jsonb object; unparseable or non-object text counts as {} (barrier-rfc0007.md §6.1 step 1). Raises nothing.';

-- True when layout entries a and b (jsonb {name, type, nullable}) are equal; NULLs are unequal.
CREATE FUNCTION syncular._layout_entry_equal(a jsonb, b jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(a IS NOT NULL AND b IS NOT NULL
                  AND a -> 'name' = b -> 'name' AND a -> 'type' = b -> 'type'
                  AND a -> 'nullable' = b -> 'nullable', false)
$$;
COMMENT ON FUNCTION syncular._layout_entry_equal(jsonb, jsonb) IS
  'Internal. True when two layout entries have equal name, type and nullable; false when either is NULL. Raises nothing.';

-- Same-version stored-layout check (barrier-rfc0007.md §6.1).
CREATE FUNCTION syncular._verify_stored_layouts(compiled jsonb, stored jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     jsonb;
  st    jsonb;
  c     jsonb;
  s     jsonb;
  n     integer;
  k     text;
  names text[] := '{}';
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    names := names || (t ->> 'name');
    st := stored -> (t ->> 'name');
    IF st IS NULL OR jsonb_typeof(st) <> 'array' THEN
      st := '[]';
    END IF;
    n := greatest(jsonb_array_length(t -> 'columns'), jsonb_array_length(st));
    FOR i IN 0 .. n - 1 LOOP
      c := t -> 'columns' -> i;
      s := st -> i;
      IF NOT syncular._layout_entry_equal(c, s) THEN
        PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
          'stored schema layouts disagree with the configured schema at the same version',
          jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                             'column', coalesce(c ->> 'name', s ->> 'name', '')));
      END IF;
    END LOOP;
  END LOOP;
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (names)) THEN
      PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
        'stored schema layouts disagree with the configured schema at the same version',
        jsonb_build_object('phase', 'storage_migration', 'table', k));
    END IF;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._verify_stored_layouts(jsonb, jsonb) IS
  'Internal. Same-version check of the stored layouts (jsonb object) against a compiled schema: per configured table in order, positions 0..max(n)-1 must agree in name, type and nullable, then no stored table may be unconfigured. Raises sync.storage.stored_layout_mismatch (SQLSTATE 55000) with details {phase: "storage_migration", table, column} or {phase, table}. barrier-rfc0007.md §6.1.';

-- The stored-layout check against the marker as it is now (used by syncular.readiness).
CREATE FUNCTION syncular._check_stored_layout(compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._verify_stored_layouts(compiled,
            syncular._parse_layouts((SELECT m.layouts FROM syncular.sync_schema_meta m WHERE m.id = 1)));
END
$$;
COMMENT ON FUNCTION syncular._check_stored_layout(jsonb) IS
  'Internal. syncular._verify_stored_layouts of a compiled schema against the layouts stored in sync_schema_meta now (absent marker = {}). Raises sync.storage.stored_layout_mismatch (SQLSTATE 55000; details {table, column} | {table}). Writes nothing. barrier-rfc0007.md §6.1.';

-- Hook: same-version physical-catalog check (barrier-rfc0007.md §6.2).  Filled by another issue
-- (CREATE OR REPLACE in a later part of the install script); today it checks nothing.
CREATE FUNCTION syncular._check_physical_layout(compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: sync.storage.physical_layout_mismatch checks go here
END
$$;
COMMENT ON FUNCTION syncular._check_physical_layout(jsonb) IS
  'Internal hook, currently a no-op. Will check every synced table of the compiled schema against the physical catalog (meta column types and nullability, PK) and raise sync.storage.physical_layout_mismatch (SQLSTATE 55000) with details {table, reason, ...}. barrier-rfc0007.md §6.2.';

-- Hook: the RFC 0007 checkpoint barrier, run under the migration lock before the marker is read
-- (barrier-rfc0007.md §3.4 step 3).  Replaced by 60_barrier.sql; here it checks nothing.
CREATE FUNCTION syncular._checkpoint_barrier(checkpoints jsonb, running_version integer)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: sync.storage.checkpoint_incomplete goes here
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_barrier(jsonb, integer) IS
  'Internal hook, a no-op until replaced (60_barrier.sql). Refuses (sync.storage.checkpoint_incomplete) when a checkpoint at running_version is not activated and is not among the caller''s declarations (checkpoints: JSON array). barrier-rfc0007.md §3.4.';

-- Hook: install declared checkpoints and raise the writer fence after a bump (RFC 0007).
CREATE FUNCTION syncular._install_checkpoints(checkpoints jsonb, version integer)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: filled by the writer-fence / checkpoint issue
END
$$;
COMMENT ON FUNCTION syncular._install_checkpoints(jsonb, integer) IS
  'Internal hook, currently a no-op. Called by ensure_schema after a create or a bump, in the bump transaction: will install each declared backfill checkpoint (checkpoints: JSON array) and raise the writer fence to version. barrier-rfc0007.md §3.4 step 6.4, §5.';

-- ---------------------------------------------------------------------------------------------
-- DDL helpers

CREATE FUNCTION syncular._create_synced_table(app_schema text, tbl jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  app_cols text := '';
BEGIN
  IF (tbl -> 'materialize')::text::boolean THEN
    SELECT string_agg(format('%I %s%s', c.value ->> 'name', syncular._pg_type(c.value ->> 'type'),
                             CASE WHEN (c.value -> 'nullable')::text::boolean THEN '' ELSE ' NOT NULL' END),
                      ', ' ORDER BY c.n) || ', '
      INTO app_cols
      FROM jsonb_array_elements(tbl -> 'columns') WITH ORDINALITY AS c(value, n);
  END IF;
  EXECUTE format('CREATE TABLE %I.%I (_sync_partition text NOT NULL, _sync_row_id text NOT NULL, %s'
                 '_sync_server_version bigint NOT NULL, _sync_scopes jsonb NOT NULL, '
                 '_sync_payload bytea NOT NULL, _sync_column_versions bytea, '
                 'PRIMARY KEY (_sync_partition, _sync_row_id))',
                 app_schema, tbl ->> 'name', app_cols);
END
$$;
COMMENT ON FUNCTION syncular._create_synced_table(text, jsonb) IS
  'Internal. CREATE TABLE app_schema.<table> for one compiled table: _sync_partition, _sync_row_id, the app columns when materialized (projection types, NOT NULL when non-nullable), _sync_server_version, _sync_scopes, _sync_payload, _sync_column_versions; PK (_sync_partition, _sync_row_id). Raises the DDL error if the table exists. data-model-and-storage.md §6.';

CREATE FUNCTION syncular._create_indexes(app_schema text, compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT * FROM syncular._index_plan(compiled) LOOP
    EXECUTE format('CREATE %sINDEX %I ON %I.%I (_sync_partition, %s)',
                   CASE WHEN p.is_unique THEN 'UNIQUE ' ELSE '' END, p.physical, app_schema, p.tbl,
                   (SELECT string_agg(format('%I', col), ', ' ORDER BY n)
                      FROM unnest(p.columns) WITH ORDINALITY AS u(col, n)));
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._create_indexes(text, jsonb) IS
  'Internal. Creates every index of syncular._index_plan(compiled) as CREATE [UNIQUE] INDEX <physical> ON app_schema.<table> (_sync_partition, <columns>). data-model-and-storage.md §6.';

-- Free-standing Syncular-owned indexes of one table: sync_ix_* or a declared name; never the
-- primary key or a constraint's index.
CREATE FUNCTION syncular._drop_owned_indexes(app_schema text, tbl text, declared text[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ixname text;
BEGIN
  FOR ixname IN
    SELECT ic.relname
      FROM pg_index i
      JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_class tc ON tc.oid = i.indrelid
      JOIN pg_namespace ns ON ns.oid = tc.relnamespace
     WHERE ns.nspname = app_schema AND tc.relname = tbl
       AND NOT i.indisprimary
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
       AND (starts_with(ic.relname::text, 'sync_ix_') OR ic.relname::text = ANY (declared))
     ORDER BY ic.relname
  LOOP
    EXECUTE format('DROP INDEX %I.%I', app_schema, ixname);
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._drop_owned_indexes(text, text, text[]) IS
  'Internal. Drops the Syncular-owned indexes of app_schema.tbl: free-standing (not primary, not constraint-owned) indexes named sync_ix_* or equal to a declared index name. Operator indexes survive. data-model-and-storage.md §6 (user indexes), §7 step 4.';

-- Projection expression of column `col` (schema type coltype) from decode_row's jsonb `j`.
CREATE FUNCTION syncular._projection_expr(col text, coltype text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE coltype
    WHEN 'integer' THEN format('(x.j ->> %L)::bigint', col)
    WHEN 'float'   THEN format('(x.j ->> %L)::double precision', col)
    WHEN 'boolean' THEN format('(x.j ->> %L)::boolean', col)
    WHEN 'json'    THEN format('CASE WHEN jsonb_typeof(x.j -> %L) = ''null'' THEN NULL ELSE x.j -> %L END', col, col)
    WHEN 'bytes'   THEN format('decode(x.j ->> %L, ''base64'')', col)
    WHEN 'crdt'    THEN format('decode(x.j ->> %L, ''base64'')', col)
    ELSE format('(x.j ->> %L)', col) END
$$;
COMMENT ON FUNCTION syncular._projection_expr(text, text) IS
  'Internal. SQL expression computing the projection of one column from x.j, the jsonb produced by syncular.decode_row (bytes and crdt as base64, json as JSON values). Raises nothing.';

-- Re-encodes payloads of one table with trailing NULLs (old_n -> new_n columns) and backfills the
-- listed projection columns (backfill: [{name, type}]), walking (partition, row_id) keysets in
-- batches of 500.  Returns the number of rows rewritten.
CREATE FUNCTION syncular._rewrite_rows(app_schema text, tbl text, old_n integer, new_n integer,
                                       backfill jsonb) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  payload_expr text;
  decode_expr  text := 'NULL::jsonb';
  set_list     text := '_sync_payload = x.p';
  stmt         text;
  last_p       text;
  last_r       text;
  batch        bigint;
  total        bigint := 0;
BEGIN
  IF new_n = old_n AND jsonb_array_length(backfill) = 0 THEN
    RETURN 0;
  END IF;
  payload_expr := CASE WHEN new_n > old_n
                       THEN 'syncular._payload_append_nulls(k._sync_payload, $3, $4)'
                       ELSE 'k._sync_payload' END;
  IF jsonb_array_length(backfill) > 0 THEN
    decode_expr := format('syncular.decode_row(%L, b.p)', tbl);
    SELECT set_list || ', ' || string_agg(format('%I = %s', e.value ->> 'name',
                                                 syncular._projection_expr(e.value ->> 'name', e.value ->> 'type')),
                                          ', ' ORDER BY e.n)
      INTO set_list
      FROM jsonb_array_elements(backfill) WITH ORDINALITY AS e(value, n);
  END IF;
  stmt := format(
    'WITH u AS ('
    '  UPDATE %1$I.%2$I AS t SET %3$s'
    '    FROM (SELECT b.pk1, b.pk2, b.p, %4$s AS j'
    '            FROM (SELECT k._sync_partition AS pk1, k._sync_row_id AS pk2, %5$s AS p'
    '                    FROM %1$I.%2$I AS k'
    '                   WHERE $1::text IS NULL OR (k._sync_partition, k._sync_row_id) > ($1, $2)'
    '                   ORDER BY k._sync_partition, k._sync_row_id LIMIT 500) AS b) AS x'
    '   WHERE t._sync_partition = x.pk1 AND t._sync_row_id = x.pk2'
    '   RETURNING t._sync_partition, t._sync_row_id)'
    ' SELECT count(*) OVER (), _sync_partition, _sync_row_id FROM u'
    '  ORDER BY _sync_partition DESC, _sync_row_id DESC LIMIT 1',
    app_schema, tbl, set_list, decode_expr, payload_expr);
  LOOP
    batch := NULL;
    EXECUTE stmt INTO batch, last_p, last_r USING last_p, last_r, old_n, new_n;
    EXIT WHEN batch IS NULL;
    total := total + batch;
    EXIT WHEN batch < 500;
  END LOOP;
  RETURN total;
END
$$;
COMMENT ON FUNCTION syncular._rewrite_rows(text, text, integer, integer, jsonb) IS
  'Internal. Bump step 5 for one synced table: re-encodes every _sync_payload from old_n to new_n columns (trailing NULLs, syncular._payload_append_nulls) and sets the projection columns listed in backfill ([{name, type}]) from syncular.decode_row (which reads the compiled schema in sync_settings, so that must already hold the new one). Walks (_sync_partition, _sync_row_id) keysets in batches of 500; returns the number of rows rewritten. data-model-and-storage.md §7 step 5.';

-- ---------------------------------------------------------------------------------------------
-- ensure_schema

CREATE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled     jsonb;
  version      integer;
  registered   text;
  prev_comp    jsonb;
  target       text;
  stored_ver   bigint;
  stored_txt   text;
  stored       jsonb;
  t            jsonb;
  tname        text;
  old_layout   jsonb;
  new_cols     jsonb;
  old_n        integer;
  new_n        integer;
  phys_cols    text[];
  mat          boolean;
  backfill     jsonb;
  added        text[];
  dropped      text[] := '{}';
  created      text[] := '{}';
  altered      text[] := '{}';
  rewrites     jsonb := '[]';   -- [{table, old, new, backfill}]
  rw           jsonb;
  rewritten    bigint := 0;
  new_names    text[];
  k            text;
  c            jsonb;
  i            integer;
BEGIN
  IF checkpoints IS NULL OR jsonb_typeof(checkpoints) <> 'array' THEN
    PERFORM syncular._schema_invalid('checkpoints must be a JSON array', 'checkpoints');
  END IF;

  -- compile first (pure): an invalid schema is refused without taking the migration lock
  compiled := syncular._compile_schema(ir, NULL);
  version := (compiled ->> 'version')::integer;
  SELECT array_agg(e ->> 'name' ORDER BY n) INTO new_names
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS x(e, n);
  new_names := coalesce(new_names, '{}');

  -- the migration lock, then every read that plans the work (decision: re-read under the lock)
  -- (a hot standby cannot take it and cannot write either: it only verifies the replicated marker;
  -- a create or bump there fails on its first write as a read-only transaction)
  IF NOT pg_is_in_recovery() THEN
    LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;
  END IF;
  PERFORM syncular._checkpoint_barrier(checkpoints, version);

  SELECT s.app_schema, s.compiled INTO registered, prev_comp FROM syncular.sync_settings s WHERE s.id = 1;
  SELECT m.schema_version, m.layouts INTO stored_ver, stored_txt FROM syncular.sync_schema_meta m WHERE m.id = 1;

  -- the app schema: explicit, else the registered one, else the caller's current_schema()
  IF registered IS NOT NULL AND app_schema IS NOT NULL AND app_schema <> registered THEN
    PERFORM syncular._schema_invalid('a different app schema is already registered in this database',
                                     'app_schema', NULL, NULL,
                                     jsonb_build_object('registeredSchema', registered, 'appSchema', app_schema));
  END IF;
  target := coalesce(app_schema, registered, caller_schema);
  IF target IS NULL THEN
    PERFORM syncular._schema_invalid('no app schema: pass app_schema or set a search_path', 'app_schema');
  END IF;
  IF target IN ('syncular', 'pg_catalog', 'information_schema') OR starts_with(target, 'pg_') THEN
    PERFORM syncular._schema_invalid('the app schema cannot be a system or extension schema', 'app_schema',
                                     NULL, NULL, jsonb_build_object('appSchema', target));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = target) THEN
    PERFORM syncular._schema_invalid('the app schema does not exist', 'app_schema', NULL, NULL,
                                     jsonb_build_object('appSchema', target));
  END IF;
  compiled := jsonb_set(compiled, '{appSchema}', to_jsonb(target));

  -- ---- stored newer: refuse
  IF stored_ver IS NOT NULL AND stored_ver > version THEN
    PERFORM syncular._raise('sync.storage.schema_newer',
      'stored schema version is newer than the schema being ensured',
      jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored_ver, 'runningSchemaVersion', version));
  END IF;

  -- ---- same version: verify only, no writes
  IF stored_ver IS NOT NULL AND stored_ver = version THEN
    PERFORM syncular._verify_stored_layouts(compiled, syncular._parse_layouts(stored_txt));
    PERFORM syncular._check_physical_layout(compiled);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'verified', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- no marker: create everything
  IF stored_ver IS NULL THEN
    FOREACH tname IN ARRAY new_names LOOP
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._schema_invalid('a synced table to create already exists in the app schema',
                                         'table_exists', tname);
      END IF;
    END LOOP;
    FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
      PERFORM syncular._create_synced_table(target, t);
    END LOOP;
    PERFORM syncular._create_indexes(target, compiled);
    INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
      ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;
    INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
      VALUES (1, version, syncular._layouts_text(compiled))
      ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
    PERFORM syncular._install_checkpoints(checkpoints, version);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'created', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- stored older: the append-only bump, planned completely before any DDL
  stored := syncular._parse_layouts(stored_txt);
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    IF NOT stored ? tname THEN
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._schema_invalid('a synced table to create already exists in the app schema',
                                         'table_exists', tname);
      END IF;
      created := created || tname;
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    new_cols := t -> 'columns';
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(new_cols);
    FOR i IN 0 .. greatest(old_n, new_n) - 1 LOOP
      IF i >= new_n THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', old_layout -> i ->> 'name', 'reason', 'column_removed'));
      ELSIF i < old_n AND NOT syncular._layout_entry_equal(old_layout -> i, new_cols -> i) THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', coalesce(new_cols -> i ->> 'name', ''),
                             'reason', 'column_changed'));
      ELSIF i >= old_n AND NOT (new_cols -> i -> 'nullable')::text::boolean THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: appended columns must be nullable',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', new_cols -> i ->> 'name',
                             'reason', 'appended_column_not_nullable'));
      END IF;
    END LOOP;
  END LOOP;

  -- 1. retired tables (stored, no longer in the schema)
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (new_names)) THEN
      DELETE FROM syncular.sync_row_scopes WHERE tbl = k;
      DELETE FROM syncular.sync_blob_refs WHERE tbl = k;
      EXECUTE format('DROP TABLE IF EXISTS %I.%I', target, k);
      dropped := dropped || k;
    END IF;
  END LOOP;

  -- 2. tables kept: drop owned indexes, add/drop projection columns, plan the row rewrite
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    CONTINUE WHEN tname = ANY (created);
    IF to_regclass(format('%I.%I', target, tname)) IS NULL THEN
      created := created || tname;     -- stored but physically missing: create it afresh
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(t -> 'columns');
    mat := (t -> 'materialize')::text::boolean;
    SELECT array_agg(a.attname::text) INTO phys_cols
      FROM pg_attribute a
     WHERE a.attrelid = format('%I.%I', target, tname)::regclass AND a.attnum > 0 AND NOT a.attisdropped;

    PERFORM syncular._drop_owned_indexes(target, tname,
              ARRAY(SELECT e ->> 'name' FROM jsonb_array_elements(t -> 'indexes') e));
    IF NOT ('_sync_column_versions' = ANY (phys_cols)) THEN
      EXECUTE format('ALTER TABLE %I.%I ADD COLUMN _sync_column_versions bytea', target, tname);
    END IF;

    backfill := '[]';
    added := '{}';
    IF mat THEN
      FOR i IN 0 .. new_n - 1 LOOP
        c := t -> 'columns' -> i;
        IF NOT ((c ->> 'name') = ANY (phys_cols)) THEN
          EXECUTE format('ALTER TABLE %I.%I ADD COLUMN %I %s', target, tname, c ->> 'name',
                         syncular._pg_type(c ->> 'type'));
          added := added || (c ->> 'name');
          IF i < old_n THEN   -- an existing value (materialize turned on): backfill it
            backfill := backfill || jsonb_build_array(jsonb_build_object('name', c ->> 'name',
                                                                         'type', c ->> 'type'));
          END IF;
        END IF;
      END LOOP;
    ELSE
      -- materialize turned off: drop the stale projection (the payload is the truth)
      FOR i IN 0 .. old_n - 1 LOOP
        IF (old_layout -> i ->> 'name') = ANY (phys_cols)
           AND NOT starts_with(old_layout -> i ->> 'name', '_sync') THEN
          EXECUTE format('ALTER TABLE %I.%I DROP COLUMN %I', target, tname, old_layout -> i ->> 'name');
          added := added || ('-' || (old_layout -> i ->> 'name'));
        END IF;
      END LOOP;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 OR cardinality(added) > 0 THEN
      altered := altered || tname;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 THEN
      rewrites := rewrites || jsonb_build_array(jsonb_build_object('table', tname, 'old', old_n,
                                                                   'new', new_n, 'backfill', backfill));
    END IF;
  END LOOP;

  -- 3. new tables
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    IF (t ->> 'name') = ANY (created) THEN
      PERFORM syncular._create_synced_table(target, t);
    END IF;
  END LOOP;

  -- 4. the compiled schema first: decode_row reads it for the backfill
  INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
    ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;

  -- 5. payload re-encoding and projection backfill
  FOR rw IN SELECT value FROM jsonb_array_elements(rewrites) WITH ORDINALITY ORDER BY ordinality LOOP
    rewritten := rewritten + syncular._rewrite_rows(target, rw ->> 'table', (rw ->> 'old')::int,
                                                    (rw ->> 'new')::int, rw -> 'backfill');
  END LOOP;

  -- 6. indexes (after the data, so unique indexes check the backfilled projection once)
  PERFORM syncular._create_indexes(target, compiled);

  -- 7. the marker, then the RFC 0007 declarations
  INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
    VALUES (1, version, syncular._layouts_text(compiled))
    ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
  PERFORM syncular._install_checkpoints(checkpoints, version);

  RETURN jsonb_build_object('schemaVersion', version, 'action', 'migrated', 'appSchema', target,
                            'previousSchemaVersion', stored_ver,
                            'tables', to_jsonb(new_names),
                            'created', to_jsonb(created), 'dropped', to_jsonb(dropped),
                            'altered', to_jsonb(altered), 'rewrittenRows', rewritten);
END
$$;
COMMENT ON FUNCTION syncular._ensure_schema(jsonb, jsonb, text, text) IS
  'Internal body of syncular.ensure_schema; caller_schema is the caller''s current_schema(). See syncular.ensure_schema.';

-- The public entry point.  Deliberately without a SET clause so that current_schema() is the
-- caller's; its only statement is fully qualified.
CREATE FUNCTION syncular.ensure_schema(ir jsonb, checkpoints jsonb DEFAULT '[]'::jsonb,
                                       app_schema text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql VOLATILE AS $$
  SELECT syncular._ensure_schema(ir, checkpoints, app_schema, pg_catalog.current_schema())
$$;
COMMENT ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) IS
$$Registers, verifies or migrates the app's synced tables (data-model-and-storage.md §2, §6, §7, §8; docs/compiled-schema.md).
Arguments: ir = schema IR, typegen (irVersion 1: schemaVersion, tables[{name, primaryKey, columns[{name, type, nullable, crdtType?, encrypted?}], scopes[{pattern, variable, column}], indexes?, references?[{column, parentTable, onDelete}], materialize?}]) or the plain server shape (version, scopes as "prefix:{variable}" or {pattern, column}); checkpoints = JSON array of RFC 0007 backfill-checkpoint declarations (accepted; installed by the barrier code); app_schema = schema holding the synced tables (default: the registered one, else the caller's current_schema()); one app schema per database.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE, then reads the marker: none -> creates every table and index and writes sync_schema_meta and sync_settings ("created"); same version -> verifies the stored layouts, writes nothing ("verified"); older -> append-only bump in the caller's transaction: retired tables dropped, new tables created, nullable columns added, sync_ix_* indexes rebuilt, payloads re-encoded with trailing NULLs (batches of 500), projection backfilled when materialize was turned on ("migrated").
Returns {schemaVersion, action, appSchema, tables[, previousSchemaVersion, created, dropped, altered, rewrittenRows]}.
Errors: sync.storage.schema_invalid (22023; details {table?, column?, rule}), sync.storage.checkpoint_incomplete (55000; {phase: "backfill_checkpoint", partition, name}), sync.storage.schema_newer (55000; {phase: "storage_migration", storedSchemaVersion, runningSchemaVersion}), sync.storage.schema_not_append_only (22023; {phase: "storage_migration", table, column, reason}), sync.storage.stored_layout_mismatch (55000; {phase: "storage_migration", table, column} | {phase, table}), sync.storage.physical_layout_mismatch (55000; {phase: "storage_migration", table, reason, ...}); DDL errors of PostgreSQL pass through.$$;
-- syncular install script, part 20: hook registration (DESIGN.md decision 7).
--
-- Hooks are plain SQL-callable functions registered by regprocedure in syncular.sync_settings.

-- Raises sync.storage.hook_signature unless fn is a plain function with exactly these argument
-- types and this return type (and, when strict_ok is false, not STRICT).
CREATE FUNCTION syncular._check_hook_signature(hook text, fn regprocedure, argtypes regtype[],
                                               rettype regtype, strict_ok boolean, expected text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
BEGIN
  SELECT * INTO p FROM pg_proc WHERE oid = fn;
  IF NOT FOUND
     OR p.prokind <> 'f'
     OR p.proretset
     OR p.prorettype <> rettype
     OR p.pronargs <> cardinality(argtypes)
     -- compare as oidvector: oidvector::oid[] has lower bound 0 and never equals an ARRAY[...]
     OR p.proargtypes <> array_to_string(argtypes::oid[], ' ')::oidvector
     OR p.provariadic <> 0
     OR (p.proisstrict AND NOT strict_ok) THEN
    PERFORM syncular._raise('sync.storage.hook_signature',
      format('a %s must be a function %s', replace(hook, '_', ' '), expected),
      jsonb_build_object('hook', hook, 'function', fn::text, 'expected', expected));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._check_hook_signature(text, regprocedure, regtype[], regtype, boolean, text) IS
  'Internal. Checks a hook function in pg_proc: a plain function (prokind f, not set-returning, not variadic) whose input argument types are exactly argtypes (names are free) and whose return type is rettype; when strict_ok is false it must not be STRICT. Raises sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) otherwise.';

CREATE FUNCTION syncular.set_scope_resolver(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('scope_resolver', fn,
      ARRAY['text', 'text', 'text']::regtype[], 'jsonb'::regtype, true, '(text, text, text) RETURNS jsonb');
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, scope_resolver) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET scope_resolver = EXCLUDED.scope_resolver;
END
$$;
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (DESIGN.md decision 7; data-model-and-storage.md §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
-- syncular install script, part 25: write-path hooks (DESIGN.md decision 7; push-and-pull.md §2.7,
-- §2.8; barrier-rfc0007.md §8; docs/hooks.md).
--
-- Row validators (§6.7) live in syncular.sync_row_validators (one per synced table); the commit
-- validator (§6.8) and the reaction planner (§6.9) in syncular.sync_settings.  Every registration
-- also rewrites the sync_settings row so that the C engine's per-backend cache (keyed by that row's
-- xmin/ctid, src/schema.c) reloads.  _validator_rejection is the one decoding rule that turns an
-- error raised by a hook into a push rejection.

-- Compact JSON text of a jsonb value: jsonb's own rendering (keys in jsonb order) without the
-- blanks jsonb puts after ',' and ':' outside strings.
CREATE FUNCTION syncular._compact_json(j jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT regexp_replace(j::text, '("(?:[^"\\]|\\.)*")|(,) |(:) ', '\1\2\3', 'g')
$$;
COMMENT ON FUNCTION syncular._compact_json(jsonb) IS
  'Internal. The compact JSON text of j: jsonb''s rendering (object keys in jsonb order, numbers as stored) with no whitespace outside strings, e.g. {"a":[1,"x, y"]}. Used for the byte limits of reaction payloads (push-and-pull.md §2.8) and rejection details (§2.4). NULL for NULL; raises nothing.';

-- Touches the settings singleton so that every backend's compiled-schema cache reloads.
CREATE FUNCTION syncular._touch_settings() RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  INSERT INTO syncular.sync_settings AS s (id) VALUES (1)
    ON CONFLICT (id) DO UPDATE SET id = s.id;
$$;
COMMENT ON FUNCTION syncular._touch_settings() IS
  'Internal. Writes a new version of the syncular.sync_settings singleton (created when absent) without changing it, so that the C engine''s per-backend cache, keyed by the row''s xmin/ctid (src/schema.c), reloads the hooks. Raises nothing.';

CREATE FUNCTION syncular.set_row_validator(tbl text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF tbl IS NULL OR NOT EXISTS (
       SELECT 1 FROM syncular.sync_settings s,
                     jsonb_array_elements(CASE WHEN jsonb_typeof(s.compiled -> 'tables') = 'array'
                                               THEN s.compiled -> 'tables' ELSE '[]'::jsonb END) t
        WHERE s.id = 1 AND t ->> 'name' = set_row_validator.tbl) THEN
    PERFORM syncular._raise('sync.unknown_table', 'table is not a synced table of the registered schema',
                            jsonb_build_object('table', tbl));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_row_validators v WHERE v.tbl = set_row_validator.tbl;
  ELSE
    PERFORM syncular._check_hook_signature('row_validator', fn,
      ARRAY['text', 'text', 'text', 'jsonb', 'jsonb', 'text', 'text']::regtype[], 'void'::regtype, false,
      '(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void, not STRICT');
    INSERT INTO syncular.sync_row_validators AS v (tbl, fn) VALUES (set_row_validator.tbl, fn)
      ON CONFLICT ON CONSTRAINT sync_row_validators_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
  PERFORM syncular._touch_settings();
END
$$;
COMMENT ON FUNCTION syncular.set_row_validator(text, regprocedure) IS
$$Registers the §6.7 row validator of one synced table (push-and-pull.md §2.7; barrier-rfc0007.md §8.1; docs/hooks.md), replacing any previous one, or unregisters it when fn is NULL.
tbl must name a table of the compiled schema (syncular.sync_settings.compiled); fn must be a plain, non-STRICT function (op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it in the push transaction, before the row write, with op 'upsert' or 'delete', the row that will persist (NULL for a delete) and the stored row (NULL for an insert), both as syncular.decode_row JSON; it rejects with RAISE ... USING ERRCODE = 'SY001' (see syncular._validator_rejection).
Stored in syncular.sync_row_validators; rewrites the sync_settings row so that cached hooks reload. Owner-only.
Errors: sync.unknown_table (SQLSTATE 42P01; details {table}) when tbl is NULL, no schema is registered or the table is not in it (also when unregistering); sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular.set_commit_validator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('commit_validator', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'void'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void');
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, commit_validator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET commit_validator = EXCLUDED.commit_validator;
END
$$;
COMMENT ON FUNCTION syncular.set_commit_validator(regprocedure) IS
$$Registers the §6.8 whole-commit validator (push-and-pull.md §2.7; barrier-rfc0007.md §8.2; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it once per new commit, after every operation and the reference pass, before the append, in the push transaction; operations is the ordered evidence [{opIndex, op, table, rowId, row, stored, storedServerVersion, nextServerVersion}] (docs/hooks.md). It rejects with RAISE ... USING ERRCODE = 'SY001', DETAIL = '{"code": ..., "opIndex": n}' (see syncular._validator_rejection).
Stored in syncular.sync_settings.commit_validator (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular.set_reaction_planner(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('reaction_planner', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'jsonb'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, reaction_planner) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET reaction_planner = EXCLUDED.reaction_planner;
END
$$;
COMMENT ON FUNCTION syncular.set_reaction_planner(regprocedure) IS
$$Registers the §6.9 reaction planner (push-and-pull.md §2.8; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb (argument names are free), called like the commit validator but only for a new commit that passed every validator; it returns a JSON array of reaction records [{key, type, version, payload, maxAttempts?}] (or NULL / [] for none), which the engine hands to syncular._enqueue_reactions in the same transaction. Any error it raises, or an invalid record, aborts the commit as a server failure (sync.internal_error, nothing persisted).
Stored in syncular.sync_settings.reaction_planner (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d       jsonb;
  code    jsonb;
  msg     jsonb;
  det     jsonb;
  idx     jsonb;
  result  jsonb;
BEGIN
  IF sqlstate IS DISTINCT FROM 'SY001' OR detail IS NULL THEN
    RETURN NULL;
  END IF;
  BEGIN
    d := detail::jsonb;
  EXCEPTION WHEN invalid_text_representation OR untranslatable_character OR program_limit_exceeded THEN
    RETURN NULL;
  END;
  IF jsonb_typeof(d) <> 'object' THEN
    RETURN NULL;
  END IF;

  code := d -> 'code';
  IF code IS NULL OR jsonb_typeof(code) <> 'string' OR code #>> '{}' = ''
     OR starts_with(code #>> '{}', 'sync.') OR starts_with(code #>> '{}', 'blob.')
     OR starts_with(code #>> '{}', 'operation.') OR starts_with(code #>> '{}', 'presence.')
     OR starts_with(code #>> '{}', 'client.') THEN
    RETURN NULL;
  END IF;

  msg := d -> 'message';
  IF msg IS NOT NULL AND jsonb_typeof(msg) NOT IN ('string', 'null') THEN
    RETURN NULL;
  END IF;
  IF msg IS NULL OR jsonb_typeof(msg) = 'null' OR msg #>> '{}' = '' THEN
    msg := to_jsonb(coalesce(nullif(_validator_rejection.message, ''), code #>> '{}'));
  END IF;
  result := jsonb_build_object('code', code, 'message', msg);

  det := d -> 'details';
  IF det IS NOT NULL AND jsonb_typeof(det) <> 'null' THEN
    IF jsonb_typeof(det) <> 'object'
       OR octet_length(convert_to(syncular._compact_json(det), 'UTF8')) > 4096 THEN
      RETURN NULL;
    END IF;
    result := result || jsonb_build_object('details', det);
  END IF;

  idx := d -> 'opIndex';
  IF idx IS NOT NULL AND jsonb_typeof(idx) <> 'null' THEN
    IF jsonb_typeof(idx) <> 'number'
       OR (idx #>> '{}')::numeric <> trunc((idx #>> '{}')::numeric)
       OR (idx #>> '{}')::numeric < 0 OR (idx #>> '{}')::numeric > 2147483647 THEN
      RETURN NULL;
    END IF;
    result := result || jsonb_build_object('opIndex', (idx #>> '{}')::numeric::integer);
  END IF;
  RETURN result;
END
$$;
COMMENT ON FUNCTION syncular._validator_rejection(text, text, text) IS
$$Internal; the decoding rule the C push engine applies to an error raised by a row validator or the commit validator (push-and-pull.md §2.7; barrier-rfc0007.md §8.4; errors.md §3.1; docs/hooks.md).
Arguments: sqlstate = the error's SQLSTATE (5 characters), detail = its DETAIL text, message = its MESSAGE text (optional, used only as a fallback).
A hook rejects with: RAISE EXCEPTION '<message>' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.quota", "message": "...", "details": {...}, "opIndex": n}'. SY001 is in the custom SQLSTATE class SY that this extension reserves for hook rejections. In DETAIL (a JSON object; other members are ignored):
  code     required, a non-empty JSON string that does not start with sync., blob., operation., presence. or client. (case-sensitive);
  message  optional string; when absent, null or empty the error MESSAGE is used, and when that is NULL or empty the code;
  details  optional object (null = absent) whose compact JSON is at most 4,096 UTF-8 bytes (the PUSH_RESULT_DETAILS bound); not checked further;
  opIndex  optional integer 0..2147483647 (null = absent); meaningful only for the commit validator (the engine ignores it for a row validator and checks it against the operation count).
Returns {"code", "message", "details"?, "opIndex"?} for a well-formed rejection, and NULL for anything else (another SQLSTATE, NULL or unparsable DETAIL, a non-object, a missing / empty / non-string / reserved code, a non-string message, non-object or oversized details, a bad opIndex): NULL means the engine answers sync.constraint_violation with the fixed message ("write validator failed" / "whole-commit validator failed"). Never raises.$$;
-- syncular install script, part 30: the engine's SQL entry points (src/sql_api.c).

CREATE FUNCTION syncular.handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle';
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6, push-and-pull.md §2) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, delivered at commit. '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response. Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';

CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle_http';
COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'POST /sync as one row (wire-format.md §9): runs syncular.handle in a subtransaction and returns exactly what the '
'HTTP endpoint answers. Success: 200, application/vnd.syncular.sync.v2, the SSP2 response. A content_type whose '
'part before '';'' is not application/vnd.syncular.sync.v2: 415 with a sync.invalid_request JSON body. A catalogue '
'error raised by the round: its catalogue HTTP status (errors.md §3) and the JSON body {code, category, retryable, '
'recommendedAction, message, details?}, nothing written. Any other error: 500 sync.internal_error with a fixed '
'message (the database text goes to the server log only). Query cancellation is re-raised. SECURITY DEFINER like '
'syncular.handle.';

CREATE PROCEDURE syncular.sync(request bytea, partition text, actor_id text,
                               INOUT response bytea DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'syncular_sync';
COMMENT ON PROCEDURE syncular.sync(bytea, text, text, bytea) IS
'The procedure form of syncular.handle (same arguments, errors and response in `response`). Called outside a '
'transaction block it commits after every pushed commit, releasing the partition lock between commits as the '
'reference server does, and serves the pull in a final transaction; inside a transaction block it behaves like '
'syncular.handle. Runs with the caller''s rights (PostgreSQL forbids transaction control in SECURITY DEFINER '
'procedures): the calling role needs the privileges on the syncular catalog tables and the synced tables that '
'handle otherwise holds as its owner.';
-- syncular install script, part 35: row helpers (src/rows.c).
-- A row of a registered table as a JSON object keyed by column name, to and from the row codec
-- (shared/reference/wire-format.md §4.2 full rows, §4.3 sparse rows).
-- JSON mapping: string -> JSON string; integer -> number (an integer within ±(2^53-1));
-- float -> number (NaN/±Infinity decode to null); boolean -> true/false; json -> the embedded
-- JSON value (encoding stores the jsonb value's text; decoding returns the parsed value, or null
-- when jsonb cannot hold it, e.g. U+0000); bytes and crdt -> standard base64 string;
-- blob_ref -> JSON object; SQL NULL / JSON null -> NULL.

CREATE FUNCTION syncular.encode_row(tbl text, "row" jsonb)
RETURNS bytea LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_encode_row';
COMMENT ON FUNCTION syncular.encode_row(text, jsonb) IS
'Encodes a JSON object as a full row (wire-format §4.2) of a registered table. Every column is written; '
'an absent key or JSON null is NULL. Raises sync.invalid_request (details {table, column}) for an unknown '
'key, a value of the wrong JSON type, an integer outside ±(2^53-1), bad base64, NULL on a non-nullable '
'column; sync.unknown_table for a table that is not registered.';

CREATE FUNCTION syncular.encode_sparse_row(tbl text, "row" jsonb)
RETURNS bytea LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_encode_sparse_row';
COMMENT ON FUNCTION syncular.encode_sparse_row(text, jsonb) IS
'Encodes a JSON object as a sparse row (wire-format §4.3, the wire-3 push payload): the keys of the '
'object are the present columns (JSON null = present NULL); the primary key is required. Errors as '
'syncular.encode_row.';

CREATE FUNCTION syncular.decode_row(tbl text, payload bytea)
RETURNS jsonb LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_decode_row';
COMMENT ON FUNCTION syncular.decode_row(text, bytea) IS
'Decodes a full row (wire-format §4.2) of a registered table into {column: value} with every column. '
'Raises sync.invalid_request (details {table}) when the bytes do not decode against the table''s columns, '
'sync.unknown_table for a table that is not registered.';

CREATE FUNCTION syncular.decode_sparse_row(tbl text, payload bytea)
RETURNS jsonb LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_decode_sparse_row';
COMMENT ON FUNCTION syncular.decode_sparse_row(text, bytea) IS
'Decodes a sparse row (wire-format §4.3) into {column: value}; absent columns are omitted, present NULLs '
'are JSON null. Errors as syncular.decode_row.';
-- syncular install script, part 36: debugging (src/debug.c).

CREATE FUNCTION syncular.debug_render(message bytea)
RETURNS jsonb LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_render';
COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL.';

CREATE FUNCTION syncular.debug_encode(doc jsonb)
RETURNS bytea LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_encode';
COMMENT ON FUNCTION syncular.debug_encode(jsonb) IS
'Inverse of syncular.debug_render: encodes a rendering-shaped document ({"magic": "SSP2", "wireVersion", '
'"msgKind", "frames": [...]} or an SSG2 segment document) with the same field names; bytes as base64; '
'json-typed fields as JSON values (re-serialized compact, so bytes may differ from an original whose raw '
'JSON text had spaces). Raises sync.invalid_request naming the field for an invalid document, or the '
'codec''s code when the encoder refuses the value (e.g. grammar).';
-- syncular install script, part 40: maintenance (push-and-pull.md §5, §1.2; data-model-and-storage.md §8).
--
-- prune() and rotate_log_epoch() take the partition's sync_partitions row FOR UPDATE first and
-- the sync_partition_registry row FOR UPDATE second (the one lock order of §8).  The views are
-- read-only conveniences over the catalog; like the catalog they are owner-only until granted.

-- Locks (partition row, then registry row) and returns the partition's registry row; raises
-- sync.storage.partition_unregistered when the registry has no row for it.
CREATE FUNCTION syncular._lock_partition(partition text)
RETURNS syncular.sync_partition_registry
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  reg syncular.sync_partition_registry;
BEGIN
  -- a registered partition that never pushed has no counter row yet; create it to lock it
  INSERT INTO syncular.sync_partitions AS p (partition) VALUES (_lock_partition.partition)
    ON CONFLICT DO NOTHING;
  PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = _lock_partition.partition FOR UPDATE;
  SELECT * INTO reg FROM syncular.sync_partition_registry r
   WHERE r.partition = _lock_partition.partition FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.partition_unregistered', 'partition is not registered',
                            jsonb_build_object('partition', _lock_partition.partition));
  END IF;
  RETURN reg;
END
$$;
COMMENT ON FUNCTION syncular._lock_partition(text) IS
  'Internal. Locks the partition''s sync_partitions row (created when missing) FOR UPDATE, then its sync_partition_registry row FOR UPDATE, and returns the registry row. Raises sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) when the partition has no registry row (the counter-row insert is rolled back with the error). data-model-and-storage.md §8.';

-- A non-negative integer retention value (ms or a count), or the default.
CREATE FUNCTION syncular._retention_value(retention jsonb, key text, dflt bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v jsonb := retention -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN dflt;
  END IF;
  IF jsonb_typeof(v) <> 'number' OR v::text::numeric <> trunc(v::text::numeric)
     OR v::text::numeric < 0 OR v::text::numeric > 9007199254740991 THEN
    PERFORM syncular._raise('sync.storage.invalid_limit',
      'retention values must be non-negative integers', jsonb_build_object('key', key, 'value', v));
  END IF;
  RETURN v::text::bigint;
END
$$;
COMMENT ON FUNCTION syncular._retention_value(jsonb, text, bigint) IS
  'Internal. retention->key as a non-negative safe integer, or dflt when absent or null. Raises sync.storage.invalid_limit (SQLSTATE 22023; details {key, value}) otherwise.';

CREATE FUNCTION syncular.prune(partition text, retention jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  k               text;
  now_ms          bigint;
  active_window   bigint;
  force_age       bigint;
  min_retained    bigint;
  push_age        bigint;
  max_seq         bigint;
  old_horizon     bigint;
  cursor_floor    bigint;
  forced_seq      bigint;
  target          bigint;
  horizon         bigint;
  removed         bigint := 0;
  removed_results bigint;
  result          jsonb;
BEGIN
  retention := coalesce(retention, '{}'::jsonb);
  IF jsonb_typeof(retention) <> 'object' THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', 'retention must be a JSON object',
                            jsonb_build_object('value', retention));
  END IF;
  FOR k IN SELECT key FROM jsonb_object_keys(retention) AS key ORDER BY key LOOP
    IF k NOT IN ('activeWindowMs', 'forceAgeMs', 'minRetainedCommits', 'pushResultsOlderThanMs', 'nowMs') THEN
      PERFORM syncular._raise('sync.storage.invalid_limit', 'unknown retention key',
                              jsonb_build_object('key', k));
    END IF;
  END LOOP;
  active_window := syncular._retention_value(retention, 'activeWindowMs', 14 * 86400000::bigint);
  force_age     := syncular._retention_value(retention, 'forceAgeMs', 30 * 86400000::bigint);
  min_retained  := syncular._retention_value(retention, 'minRetainedCommits', 1000);
  push_age      := syncular._retention_value(retention, 'pushResultsOlderThanMs', NULL);
  now_ms        := syncular._retention_value(retention, 'nowMs',
                     (extract(epoch FROM clock_timestamp()) * 1000)::bigint);

  -- lock order: partition row, then registry row (refuses an unregistered partition)
  PERFORM syncular._lock_partition(prune.partition);
  SELECT p.max_commit_seq, p.horizon_seq INTO max_seq, old_horizon
    FROM syncular.sync_partitions p WHERE p.partition = prune.partition;

  -- floor: the lowest cursor of clients active within the window (none active: no constraint)
  SELECT min(c.cursor) INTO cursor_floor
    FROM syncular.sync_clients c
   WHERE c.partition = prune.partition AND c.updated_at_ms >= now_ms - active_window;
  cursor_floor := coalesce(cursor_floor, max_seq);
  -- forced: the newest commit created before now - forceAge
  SELECT max(c.commit_seq) INTO forced_seq
    FROM syncular.sync_commits c
   WHERE c.partition = prune.partition AND c.created_at_ms < now_ms - force_age;
  forced_seq := coalesce(forced_seq, 0);

  target := least(greatest(cursor_floor, forced_seq), max_seq - min_retained);
  horizon := greatest(old_horizon, greatest(target, 0));

  IF push_age IS NOT NULL THEN
    -- idempotency records whose commit is still in the log and older than the cutoff
    DELETE FROM syncular.sync_push_results r
     USING syncular.sync_commits c
     WHERE r.partition = prune.partition AND c.partition = r.partition
       AND c.client_id = r.client_id AND c.client_commit_id = r.client_commit_id
       AND c.created_at_ms < now_ms - push_age;
    GET DIAGNOSTICS removed_results = ROW_COUNT;
  END IF;

  IF horizon > 0 THEN
    DELETE FROM syncular.sync_commits c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    GET DIAGNOSTICS removed = ROW_COUNT;
    DELETE FROM syncular.sync_changes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_change_scopes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_tombstones c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
  END IF;
  IF horizon <> old_horizon THEN
    UPDATE syncular.sync_partitions p SET horizon_seq = horizon WHERE p.partition = prune.partition;
  END IF;

  result := jsonb_build_object('previousHorizonSeq', old_horizon, 'horizonSeq', horizon,
                               'removedCommits', removed);
  IF push_age IS NOT NULL THEN
    result := result || jsonb_build_object('removedPushResults', removed_results);
  END IF;
  RETURN result;
END
$$;
COMMENT ON FUNCTION syncular.prune(text, jsonb) IS
$$Prunes one partition's commit log (push-and-pull.md §5, §3.8; SPEC §4.6). Nothing prunes automatically: schedule it (hourly to daily).
retention (JSON object, all keys optional, non-negative integers): activeWindowMs (default 1209600000 = 14 d; clients updated within it hold the floor at their minimum cursor, a cursor of -1 holds everything), forceAgeMs (default 2592000000 = 30 d; commits created before now - forceAgeMs may be pruned regardless of cursors), minRetainedCommits (default 1000; the newest commits always kept), pushResultsOlderThanMs (absent by default = never; when set, also deletes the sync_push_results of commits still in the log created before now - value, before the log is cut), nowMs (clock override, for tests and replays).
target = min(max(floor, forcedSeq), maxSeq - minRetainedCommits); horizon = max(old horizon, target, 0); deletes sync_commits, sync_changes, sync_change_scopes and sync_tombstones with commit_seq <= horizon. With no active client the floor is maxSeq. Locks the sync_partitions row, then the registry row (FOR UPDATE). Safe to repeat.
Returns {previousHorizonSeq, horizonSeq, removedCommits[, removedPushResults]}.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}); sync.storage.invalid_limit (22023; details {key} for an unknown key, {key, value} for a bad value, {value} when retention is not an object).$$;

CREATE FUNCTION syncular.rotate_log_epoch(partition text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text := gen_random_uuid()::text;
BEGIN
  PERFORM syncular._lock_partition(rotate_log_epoch.partition);
  UPDATE syncular.sync_partition_registry r SET log_epoch = epoch, epoch_required = true
   WHERE r.partition = rotate_log_epoch.partition;
  DELETE FROM syncular.sync_clients c WHERE c.partition = rotate_log_epoch.partition;
  RETURN epoch;
END
$$;
COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
$$Rotates a partition's log epoch, e.g. after a backup restore and before traffic resumes (push-and-pull.md §1.2, §5; SPEC §2.1).
Under the partition lock (sync_partitions row, then registry row, FOR UPDATE): sets a new random epoch (gen_random_uuid()::text), epoch_required = true, and deletes every sync_clients row of the partition; clients then reset and re-bootstrap. Returns the new epoch.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) for a partition without a registry row.$$;

-- ---------------------------------------------------------------------------------------------
-- read-only views

CREATE VIEW syncular.partitions AS
SELECT coalesce(p.partition, r.partition)          AS partition,
       coalesce(p.max_commit_seq, 0)               AS max_commit_seq,
       coalesce(p.horizon_seq, 0)                  AS horizon_seq,
       r.log_epoch,
       r.last_authenticated_at_ms,
       (SELECT count(*) FROM syncular.sync_clients c
         WHERE c.partition = coalesce(p.partition, r.partition)) AS clients
  FROM syncular.sync_partitions p
  FULL JOIN syncular.sync_partition_registry r ON r.partition = p.partition;
COMMENT ON VIEW syncular.partitions IS
  'Read-only. One row per known partition (counter row and/or registry row): max_commit_seq, horizon_seq (0 when the partition never pushed), log_epoch and last_authenticated_at_ms (NULL when unregistered), clients = number of client records. push-and-pull.md §5.';

CREATE VIEW syncular.clients AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor, c.subscriptions, c.updated_at_ms,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
COMMENT ON VIEW syncular.clients IS
  'Read-only. The client records (push-and-pull.md §1.3) plus behind_horizon: true when 0 <= cursor < the partition''s horizon_seq (its next pull resets with sync.cursor_expired).';

CREATE VIEW syncular.commits AS
SELECT c.partition, c.commit_seq, c.client_id, c.client_commit_id, c.actor_id, c.created_at_ms,
       c.writer_version, coalesce(ch.changes, 0) AS changes, coalesce(ch.tables, '{}') AS tables
  FROM syncular.sync_commits c
  LEFT JOIN LATERAL (SELECT count(*) AS changes, array_agg(DISTINCT x.tbl ORDER BY x.tbl) AS tables
                       FROM syncular.sync_changes x
                      WHERE x.partition = c.partition AND x.commit_seq = c.commit_seq) ch ON true;
COMMENT ON VIEW syncular.commits IS
  'Read-only. The commit log (data-model-and-storage.md §1.2, §4 sync_commits) with changes = number of sync_changes rows and tables = the distinct tables they touch.';
-- syncular install script, part 50: SQL producers.
-- syncular.push / syncular.pull take and return JSON (rows as objects keyed by column name) and
-- run the same engine as clients: they build an SSP2 wire-3 request, serve it with
-- syncular.handle(), and render the response.  For backend code (jobs, admin tools, triggers in
-- other systems) and for debugging.  push and pull are SECURITY DEFINER (like handle), so a role
-- with EXECUTE on them needs no privileges on the catalog.

-- The partition's log epoch, acquiring it (one header-only round) when the partition is new.
CREATE FUNCTION syncular._producer_epoch(p_partition text, p_actor_id text, p_client_id text)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text;
  compiled jsonb;
  resp jsonb;
BEGIN
  SELECT r.log_epoch INTO epoch FROM syncular.sync_partition_registry r WHERE r.partition = p_partition;
  IF epoch IS NOT NULL THEN
    RETURN epoch;
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
    'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
                         'schemaVersion', (compiled->>'version')::int),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0,
                         'maxSnapshotPages', 0, 'accept', 1)))),
    p_partition, p_actor_id));
  RETURN resp->'frames'->0->>'logEpoch';
END $$;

-- Names of the columns marked in a conflictColumns bitmap (presence layout, LSB first).
CREATE FUNCTION syncular._bitmap_columns(p_table text, p_bitmap_b64 text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(c.col->'name' ORDER BY c.ord), '[]'::jsonb)
    FROM syncular.sync_settings s,
         jsonb_array_elements(s.compiled->'tables') t(tbl),
         jsonb_array_elements(t.tbl->'columns') WITH ORDINALITY c(col, ord)
   WHERE s.id = 1 AND t.tbl->>'name' = p_table AND p_bitmap_b64 IS NOT NULL
     AND length(decode(p_bitmap_b64, 'base64')) > (c.ord - 1) / 8
     -- get_bit numbers bits LSB-first within each byte, as the bitmap does
     AND get_bit(decode(p_bitmap_b64, 'base64'), (c.ord - 1)::int) = 1
$$;

CREATE FUNCTION syncular.push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  c jsonb;
  o jsonb;
  ops jsonb;
  tbl jsonb;
  row_id text;
  resp jsonb;
  out jsonb := '[]'::jsonb;
  f jsonb;
  r jsonb;
  results jsonb;
  commit_in jsonb;
BEGIN
  IF p_partition IS NULL OR p_actor_id IS NULL OR p_client_id IS NULL THEN
    PERFORM syncular._raise('sync.invalid_request', 'partition, actor_id and client_id are required', NULL);
  END IF;
  IF jsonb_typeof(p_commits) IS DISTINCT FROM 'array' OR jsonb_array_length(p_commits) = 0 THEN
    PERFORM syncular._raise('sync.invalid_request', 'commits must be a non-empty JSON array', NULL);
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  frames := jsonb_build_array(jsonb_build_object(
    'type', 'REQ_HEADER', 'clientId', p_client_id,
    'schemaVersion', (compiled->>'version')::int,
    'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)));
  FOR c IN SELECT * FROM jsonb_array_elements(p_commits) LOOP
    IF jsonb_typeof(c->'operations') IS DISTINCT FROM 'array' THEN
      PERFORM syncular._raise('sync.invalid_request', 'each commit needs an operations array',
        jsonb_build_object('clientCommitId', c->'clientCommitId'));
    END IF;
    ops := '[]'::jsonb;
    FOR o IN SELECT * FROM jsonb_array_elements(c->'operations') LOOP
      SELECT t INTO tbl FROM jsonb_array_elements(compiled->'tables') t WHERE t->>'name' = o->>'table';
      IF tbl IS NULL THEN
        PERFORM syncular._raise('sync.unknown_table', 'table is not served',
          jsonb_build_object('table', o->'table'));
      END IF;
      row_id := coalesce(o->>'rowId', o->'row'->>(tbl->>'primaryKey'));
      IF row_id IS NULL THEN
        PERFORM syncular._raise('sync.invalid_request', 'an operation needs rowId or a row with its primary key',
          jsonb_build_object('table', o->'table'));
      END IF;
      ops := ops || jsonb_strip_nulls(jsonb_build_object(
        'table', o->>'table', 'rowId', row_id,
        'op', coalesce(o->>'op', 'upsert'),
        'baseVersion', o->'baseVersion',
        'payload', CASE WHEN coalesce(o->>'op', 'upsert') = 'upsert'
                        THEN encode(syncular.encode_sparse_row(o->>'table', o->'row'), 'base64') END));
    END LOOP;
    frames := frames || jsonb_build_object('type', 'PUSH_COMMIT',
      'clientCommitId', c->>'clientCommitId', 'operations', ops);
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  -- PUSH_RESULT frames, in commit order, with rows decoded and bitmaps named
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    IF f->>'type' = 'PUSH_RESULT' THEN
      results := '[]'::jsonb;
      SELECT cc INTO commit_in FROM jsonb_array_elements(p_commits) cc
        WHERE cc->>'clientCommitId' = f->>'clientCommitId' LIMIT 1;
      FOR r IN SELECT * FROM jsonb_array_elements(f->'results') LOOP
        IF r ? 'serverRow' THEN
          r := r || jsonb_build_object(
            'serverRow', syncular.decode_row(
               commit_in->'operations'->((r->>'opIndex')::int)->>'table',
               decode(r->>'serverRow', 'base64')),
            'conflictColumns', syncular._bitmap_columns(
               commit_in->'operations'->((r->>'opIndex')::int)->>'table',
               r->>'conflictColumns'));
        END IF;
        results := results || r;
      END LOOP;
      out := out || (f - 'type' || jsonb_build_object('results', results));
    ELSIF f->>'type' = 'PUSH_RESULT_DETAILS' THEN
      out := jsonb_set(out, ARRAY[(jsonb_array_length(out) - 1)::text, 'details'], f->'entries');
    END IF;
  END LOOP;
  RETURN out;
END $$;

COMMENT ON FUNCTION syncular.push(text, text, text, jsonb) IS
'Pushes commits from SQL through the same engine as clients (SPEC §6): builds a wire-3 request, serves it with '
'syncular.handle() in the caller''s transaction, and returns one result per commit. '
'commits: [{"clientCommitId": text, "operations": [{"table": text, "op": "upsert"|"delete", "rowId"?: text, '
'"baseVersion"?: int (absent = last write wins, 0 = insert intent), "row"?: {column: value}}]}] — the row is sparse: '
'only its keys are written; the primary key is required; bytes as base64. '
'Returns [{"clientCommitId", "status": "applied"|"cached"|"rejected", "commitSeq"?, "results": [{"opIndex", "status", '
'"code"?, "message"?, "retryable"?, "serverVersion"?, "serverRow"?: {...}, "conflictColumns"?: [names]}], "details"?}]. '
'Raises what syncular.handle() raises for request-level errors (e.g. sync.invalid_client_id 22023, '
'sync.too_many_operations 54000), sync.unknown_table (42P01) for an unknown table, '
'sync.storage.schema_not_registered (55000) before ensure_schema. Partition state (epoch) is acquired on first use.';

CREATE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb,
                              p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  s jsonb;
  resp jsonb;
  f jsonb;
  sections jsonb := '[]'::jsonb;
  cur jsonb;
  seg jsonb;
  blk jsonb;
  rw jsonb;
  ch jsonb;
  changes jsonb;
BEGIN
  IF jsonb_typeof(p_subscriptions) IS DISTINCT FROM 'array' THEN
    PERFORM syncular._raise('sync.invalid_request', 'subscriptions must be a JSON array', NULL);
  END IF;
  SELECT st.compiled INTO compiled FROM syncular.sync_settings st WHERE st.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
      'schemaVersion', (compiled->>'version')::int,
      'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)),
    jsonb_build_object('type', 'PULL_HEADER',
      'limitCommits', coalesce((p_limits->>'limitCommits')::int, 0),
      'limitSnapshotRows', coalesce((p_limits->>'limitSnapshotRows')::int, 0),
      'maxSnapshotPages', coalesce((p_limits->>'maxSnapshotPages')::int, 0),
      'accept', 1));
  FOR s IN SELECT * FROM jsonb_array_elements(p_subscriptions) LOOP
    frames := frames || jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION',
      'id', s->>'id', 'table', s->>'table', 'scopes', coalesce(s->'scopes', '{}'::jsonb),
      'cursor', coalesce((s->>'cursor')::bigint, -1), 'bootstrapState', s->'bootstrapState'));
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'SUB_START' THEN
      cur := (f - 'type') || '{"commits": [], "rows": []}'::jsonb;
    WHEN 'COMMIT' THEN
      changes := '[]'::jsonb;
      FOR ch IN SELECT * FROM jsonb_array_elements(f->'changes') LOOP
        changes := changes || (jsonb_build_object('table', f->'tables'->((ch->>'tableIndex')::int)) ||
          (ch - 'tableIndex' - 'row') ||
          CASE WHEN ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                 f->'tables'->>((ch->>'tableIndex')::int), decode(ch->>'row', 'base64')))
               ELSE '{}'::jsonb END);
      END LOOP;
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      FOR blk IN SELECT * FROM jsonb_array_elements(seg->'blocks') LOOP
        FOR rw IN SELECT * FROM jsonb_array_elements(blk) LOOP
          cur := jsonb_set(cur, '{rows}', cur->'rows' || jsonb_build_object(
            'serverVersion', rw->'serverVersion', 'row', rw->'values'));
        END LOOP;
      END LOOP;
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE
      NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;

COMMENT ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) IS
'Pulls from SQL through the same engine as clients (SPEC §4): builds a wire-3 request, serves it with '
'syncular.handle() and returns one section per subscription in request order. '
'subscriptions: [{"id": text, "table": text, "scopes": {variable: [values]}, "cursor"?: int (default -1 = bootstrap), '
'"bootstrapState"?: json}]; limits: {"limitCommits", "limitSnapshotRows", "maxSnapshotPages"} (0 or absent = defaults). '
'Returns [{"id", "status": "active"|"revoked"|"reset", "reasonCode", "effectiveScopes", "bootstrap", "commits": '
'[{"commitSeq", "createdAtMs", "actorId", "changes": [{"table", "rowId", "op", "rowVersion"?, "scopes", "row"?: {...}}]}], '
'"rows": [{"serverVersion", "row": {...}}], "nextCursor", "bootstrapState"?}]. Raises what syncular.handle() raises for '
'request-level errors (sync.invalid_subscription 22023, sync.unknown_table 42P01, ...).';
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

CREATE OR REPLACE FUNCTION syncular._checkpoint_json(c syncular.sync_backfill_checkpoints)
RETURNS jsonb LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object('partition', c.partition, 'name', c.name,
                            'schemaVersion', c.schema_version, 'state', c.state,
                            'watermark', c.watermark, 'ownerEpoch', c.owner_epoch,
                            'observedRows', c.observed_rows, 'updatedAtMs', c.updated_at_ms)
$$;
COMMENT ON FUNCTION syncular._checkpoint_json(syncular.sync_backfill_checkpoints) IS
'Internal. One sync_backfill_checkpoints row as JSON {partition, name, schemaVersion, state, watermark, '
'ownerEpoch, observedRows, updatedAtMs} (numbers for the integer columns; updatedAtMs in ms since the Unix epoch). '
'Never raises.';

CREATE OR REPLACE FUNCTION syncular._checkpoint_args(partition text, name text)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _checkpoint_args.partition IS NULL OR _checkpoint_args.partition = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'partition'));
  END IF;
  IF _checkpoint_args.name IS NULL OR _checkpoint_args.name = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'name'));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_args(text, text) IS
'Internal. Raises sync.storage.invalid_checkpoints (SQLSTATE 22023, details {field}) when partition or name is '
'NULL or empty.';

CREATE OR REPLACE FUNCTION syncular._checkpoint_declarations(checkpoints jsonb)
RETURNS TABLE (partition text, name text, schema_version integer)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d jsonb;
  i integer := 0;
  v numeric;
BEGIN
  IF checkpoints IS NULL OR jsonb_typeof(checkpoints) = 'null' THEN
    RETURN;
  END IF;
  IF jsonb_typeof(checkpoints) <> 'array' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'checkpoint declarations must be an array of {partition, name, schemaVersion}',
      jsonb_build_object('reason', 'not_array'));
  END IF;
  FOR d IN SELECT e.value FROM jsonb_array_elements(checkpoints) WITH ORDINALITY e(value, ord)
           ORDER BY e.ord LOOP
    IF jsonb_typeof(d) <> 'object' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'reason', 'not_object'));
    END IF;
    IF jsonb_typeof(d -> 'partition') IS DISTINCT FROM 'string' OR d ->> 'partition' = '' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'partition'));
    END IF;
    IF jsonb_typeof(d -> 'name') IS DISTINCT FROM 'string' OR d ->> 'name' = '' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'name'));
    END IF;
    IF jsonb_typeof(d -> 'schemaVersion') IS DISTINCT FROM 'number' THEN
      v := NULL;
    ELSE
      v := (d ->> 'schemaVersion')::numeric;
    END IF;
    IF v IS NULL OR v <> trunc(v) OR v < 1 OR v > 2147483647 THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'schemaVersion'));
    END IF;
    partition := d ->> 'partition';
    name := d ->> 'name';
    schema_version := v::integer;
    RETURN NEXT;
    i := i + 1;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_declarations(jsonb) IS
'Internal. Validates checkpoint declarations (RFC 0007 §3.1): NULL / JSON null = none; otherwise a JSON array of '
'objects {partition: non-empty string, name: non-empty string, schemaVersion: integer 1..2^31-1} (other members '
'ignored). Returns one row per declaration in array order. Bad shape -> sync.storage.invalid_checkpoints '
'(SQLSTATE 22023) with details {reason:"not_array"} or {index (0-based), reason:"not_object"} or {index, field}.';

-- The first checkpoint, in (partition, name) order, that is incomplete at `running_version`
-- (schema_version = running, state <> activated; all partitions) and not covered by a
-- declaration (matched on partition + name only, §3.1).  No row when every one is covered.
CREATE OR REPLACE FUNCTION syncular._first_undeclared_checkpoint(checkpoints jsonb, running_version integer,
  OUT partition text, OUT name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  decl jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', d.partition, 'name', d.name)), '[]'::jsonb)
    INTO decl FROM syncular._checkpoint_declarations(_first_undeclared_checkpoint.checkpoints) d;
  SELECT c.partition, c.name INTO _first_undeclared_checkpoint.partition, _first_undeclared_checkpoint.name
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.schema_version = _first_undeclared_checkpoint.running_version
     AND c.state <> 'activated'
     AND NOT decl @> jsonb_build_array(jsonb_build_object('partition', c.partition, 'name', c.name))
   ORDER BY c.partition COLLATE "C", c.name COLLATE "C"
   LIMIT 1;
END
$$;
COMMENT ON FUNCTION syncular._first_undeclared_checkpoint(jsonb, integer) IS
'Internal. (partition, name) of the first incomplete checkpoint at running_version (all partitions, ordered by '
'(partition, name) COLLATE "C") that the declarations do not cover (partition + name match; schemaVersion not '
'compared, RFC 0007 §3.1); both NULL when none. Raises sync.storage.invalid_checkpoints for a bad declaration list.';

-- install (§3.2): the declared row (never touching an existing one) and the fence raise.
CREATE OR REPLACE FUNCTION syncular._install_checkpoint(partition text, name text, schema_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO syncular.sync_backfill_checkpoints AS c
         (partition, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms)
  VALUES (_install_checkpoint.partition, _install_checkpoint.name, _install_checkpoint.schema_version,
          'declared', 0, 0, 0, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
  ON CONFLICT (partition, name) DO NOTHING;

  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  VALUES (_install_checkpoint.partition, _install_checkpoint.schema_version)
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
COMMENT ON FUNCTION syncular._install_checkpoint(text, text, integer) IS
'Internal (RFC 0007 §3.2 "install"). Inserts the checkpoint row (state declared, watermark/owner_epoch/'
'observed_rows 0, updated_at_ms now) unless (partition, name) exists in any state, then raises '
'sync_writer_fence(partition) to schema_version with max semantics (never lowers). Takes no partition lock.';

-- ---------------------------------------------------------------------------------------------
-- checkpoints

CREATE OR REPLACE FUNCTION syncular.declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(declare_checkpoint.partition, declare_checkpoint.name);
  IF declare_checkpoint.schema_version IS NULL OR declare_checkpoint.schema_version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  PERFORM syncular._install_checkpoint(declare_checkpoint.partition, declare_checkpoint.name,
                                       declare_checkpoint.schema_version);
  SELECT * INTO c FROM syncular.sync_backfill_checkpoints k
   WHERE k.partition = declare_checkpoint.partition AND k.name = declare_checkpoint.name;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared', 'backfill checkpoint is not declared',
      jsonb_build_object('partition', declare_checkpoint.partition, 'name', declare_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
COMMENT ON FUNCTION syncular.declare_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 declareCheckpoint. Installs the checkpoint (partition text, name text: non-empty; schema_version '
'integer >= 1): inserts a declared row unless one exists in any state (ON CONFLICT DO NOTHING) and raises the '
'partition''s writer fence to schema_version, never lowering it; then returns the stored row as JSON {partition, '
'name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs (ms)} whatever its state '
'(re-declaring an activated checkpoint returns it activated). Takes no partition and no migration lock; the fence '
'applies from the caller''s commit. Errors: sync.storage.invalid_checkpoints (22023) for NULL/empty arguments or a '
'version < 1; sync.storage.checkpoint_not_declared (42704) if the row is missing after the install.';

CREATE OR REPLACE FUNCTION syncular.claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(claim_checkpoint.partition, claim_checkpoint.name);
  IF claim_checkpoint.schema_version IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET owner_epoch = k.owner_epoch + 1,
         state = CASE WHEN k.state = 'declared' THEN 'backfilling' ELSE k.state END,
         schema_version = claim_checkpoint.schema_version,
         updated_at_ms = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE k.partition = claim_checkpoint.partition AND k.name = claim_checkpoint.name
     AND k.state <> 'activated'
  RETURNING k.* INTO c;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared',
      'backfill checkpoint is not declared or is already activated',
      jsonb_build_object('partition', claim_checkpoint.partition, 'name', claim_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
COMMENT ON FUNCTION syncular.claim_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 claimCheckpoint. One UPDATE of the (partition, name) row unless it is activated: owner_epoch + 1, '
'declared -> backfilling (backfilling stays: a takeover), schema_version overwritten with the caller''s value '
'(reference behaviour), updated_at_ms = now. Returns the claimed row as JSON (see declare_checkpoint); its '
'ownerEpoch is the caller''s owner epoch. Concurrent claimers serialize on the row lock and get distinct epochs. '
'Errors: sync.storage.checkpoint_not_declared (42704) when the row is absent or activated; '
'sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';

CREATE OR REPLACE FUNCTION syncular.advance_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  n bigint;
BEGIN
  IF advance_checkpoint.watermark IS NULL OR advance_checkpoint.observed_rows IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'advance_checkpoint needs a watermark and an observed row count',
      jsonb_build_object('field', CASE WHEN advance_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'observedRows' END));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET watermark = advance_checkpoint.watermark,
         observed_rows = advance_checkpoint.observed_rows,
         updated_at_ms = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE k.partition = advance_checkpoint.partition AND k.name = advance_checkpoint.name
     AND k.owner_epoch = advance_checkpoint.owner_epoch;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END
$$;
COMMENT ON FUNCTION syncular.advance_checkpoint(text, text, bigint, bigint, bigint) IS
'RFC 0007 §3.2 advanceCheckpoint. Compare-and-set on owner_epoch only (state is not checked, as in the reference): '
'sets watermark (a commit_seq), observed_rows and updated_at_ms when the row''s owner_epoch equals owner_epoch. '
'Returns true iff one row changed; a stale owner (or an unknown checkpoint) gets false and never an error. Runs in '
'the caller''s transaction, so a backfill batch can share one transaction with its push: '
'SELECT syncular.advance_checkpoint(...), syncular.handle(...) -- and roll back when it returns false. '
'Errors: sync.storage.invalid_checkpoints (22023) for a NULL watermark or observed_rows.';

-- §3.3 hasSourceChangesAbove
CREATE OR REPLACE FUNCTION syncular._source_changes_above(partition text, tables text[], seq bigint)
RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  horizon bigint;
BEGIN
  SELECT coalesce((SELECT p.horizon_seq FROM syncular.sync_partitions p
                    WHERE p.partition = _source_changes_above.partition), 0)
    INTO horizon;
  IF coalesce(cardinality(_source_changes_above.tables), 0) = 0 THEN
    RETURN 'clean';
  END IF;
  IF EXISTS (SELECT 1 FROM syncular.sync_changes ch
              WHERE ch.partition = _source_changes_above.partition
                AND ch.tbl = ANY (_source_changes_above.tables)
                AND ch.commit_seq > _source_changes_above.seq) THEN
    RETURN 'changed';
  END IF;
  IF horizon > _source_changes_above.seq THEN
    RETURN 'unverifiable';
  END IF;
  RETURN 'clean';
END
$$;
COMMENT ON FUNCTION syncular._source_changes_above(text, text[], bigint) IS
'Internal (RFC 0007 §3.3 hasSourceChangesAbove). ''clean'' for an empty table list; ''changed'' when sync_changes '
'holds a row of the partition for one of the tables with commit_seq > seq; otherwise ''unverifiable'' when the '
'partition''s horizon_seq (0 without a row) is > seq (a pruned window is never clean); otherwise ''clean''.';

CREATE OR REPLACE FUNCTION syncular.activate_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, sources text[])
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  cp_version integer;
  fence integer;
  coverage text;
  n bigint;
BEGIN
  PERFORM syncular._checkpoint_args(activate_checkpoint.partition, activate_checkpoint.name);
  IF activate_checkpoint.owner_epoch IS NULL OR activate_checkpoint.watermark IS NULL
     OR activate_checkpoint.sources IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'activate_checkpoint needs an owner epoch, a watermark and a source table list',
      jsonb_build_object('field', CASE WHEN activate_checkpoint.owner_epoch IS NULL THEN 'ownerEpoch'
                                       WHEN activate_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'sources' END));
  END IF;

  -- the partition write lock, the same row lock a push takes
  PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = activate_checkpoint.partition FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO syncular.sync_partitions (partition) VALUES (activate_checkpoint.partition)
    ON CONFLICT (partition) DO NOTHING;
    PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = activate_checkpoint.partition FOR UPDATE;
  END IF;

  -- (1) the fence must cover the checkpoint's version
  SELECT (SELECT k.schema_version FROM syncular.sync_backfill_checkpoints k
           WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name),
         (SELECT f.required_writer_version FROM syncular.sync_writer_fence f
           WHERE f.partition = activate_checkpoint.partition)
    INTO cp_version, fence;
  IF cp_version IS NULL OR fence IS NULL OR fence < cp_version THEN
    PERFORM syncular._raise('sync.storage.checkpoint_fence_missing',
      'the writer fence does not cover the backfill checkpoint''s schema version',
      jsonb_build_object('partition', activate_checkpoint.partition, 'name', activate_checkpoint.name,
                         'schemaVersion', cp_version, 'requiredWriterVersion', fence));
  END IF;

  -- (2) coverage of the source tables above the watermark; nothing is written on a refusal
  coverage := syncular._source_changes_above(activate_checkpoint.partition, activate_checkpoint.sources,
                                              activate_checkpoint.watermark);
  IF coverage = 'changed' THEN
    RETURN 'stale';
  ELSIF coverage = 'unverifiable' THEN
    RETURN 'unverifiable';
  END IF;

  -- (3) activate under the owner's epoch
  UPDATE syncular.sync_backfill_checkpoints k
     SET state = 'activated',
         watermark = activate_checkpoint.watermark,
         updated_at_ms = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name
     AND k.owner_epoch = activate_checkpoint.owner_epoch AND k.state <> 'activated';
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN CASE WHEN n = 1 THEN 'activated' ELSE 'stale' END;
END
$$;
COMMENT ON FUNCTION syncular.activate_checkpoint(text, text, bigint, bigint, text[]) IS
'RFC 0007 §3.2 activateCheckpoint. Under the partition write lock (sync_partitions row FOR UPDATE, the row is '
'inserted first when missing): (1) the checkpoint must exist and the partition''s fence must be >= its '
'schema_version, else sync.storage.checkpoint_fence_missing (SQLSTATE 55000, details {partition, name, '
'schemaVersion, requiredWriterVersion}); (2) coverage (§3.3) of the source tables (sync_changes.tbl names) above '
'watermark (a commit_seq): changed -> ''stale'', pruned past the watermark -> ''unverifiable'', writing nothing; '
'(3) state = activated, watermark, updated_at_ms where owner_epoch matches and the row is not activated -> '
'''activated'', else ''stale'' (wrong epoch or already activated). Owner epoch 0 activates a never-claimed row. '
'Errors: also sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';

CREATE OR REPLACE FUNCTION syncular.checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._checkpoint_json(c)
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.partition = $1
   ORDER BY c.name COLLATE "C"
$$;
COMMENT ON FUNCTION syncular.checkpoints(text) IS
'RFC 0007 §3.2 readCheckpoints. Every checkpoint of the partition, any state, ordered by name (COLLATE "C"), '
'each as JSON {partition, name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs}. '
'Never raises.';

CREATE OR REPLACE FUNCTION syncular.source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(max(ch.commit_seq), 0)
    FROM syncular.sync_changes ch
   WHERE ch.partition = $1 AND ch.tbl = ANY ($2)
$$;
COMMENT ON FUNCTION syncular.source_coverage_seq(text, text[]) IS
'RFC 0007 §3.2 sourceCoverageSeq. The highest commit_seq in sync_changes of the partition for the listed tables '
'(synced table names); 0 when there is none or the list is empty/NULL. A watermark for activate_checkpoint. '
'Never raises.';


-- ---------------------------------------------------------------------------------------------
-- the serve gate (§4)

CREATE OR REPLACE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]',
  running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  running bigint;
  stored bigint;
  epoch text;
  pending jsonb;
  decl jsonb;
  uncovered jsonb;
  refusal jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', d.partition, 'name', d.name)), '[]'::jsonb)
    INTO decl FROM syncular._checkpoint_declarations(serve_gate.checkpoints) d;

  -- one statement, one snapshot: running version, marker, log epoch, pending checkpoints
  WITH rv AS (
    SELECT coalesce(serve_gate.running_version,
                    (SELECT (s.compiled ->> 'version')::integer FROM syncular.sync_settings s
                      WHERE s.id = 1)) AS v
  )
  SELECT rv.v,
         coalesce((SELECT m.schema_version FROM syncular.sync_schema_meta m WHERE m.id = 1), 0),
         (SELECT r.log_epoch FROM syncular.sync_partition_registry r
           WHERE r.partition = serve_gate.partition),
         (SELECT coalesce(jsonb_agg(jsonb_build_object('partition', c.partition, 'name', c.name)
                                    ORDER BY c.partition COLLATE "C", c.name COLLATE "C"), '[]'::jsonb)
            FROM syncular.sync_backfill_checkpoints c
           WHERE c.schema_version = rv.v AND c.state <> 'activated')
    INTO running, stored, epoch, pending
    FROM rv;

  IF running IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no compiled schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  -- §4.2: schema first, then the first pending checkpoint (in (partition, name) order) not declared
  IF stored > running THEN
    refusal := jsonb_build_object('kind', 'schema',
      'details', jsonb_build_object('storedSchemaVersion', stored, 'runningSchemaVersion', running));
  ELSE
    SELECT p.value INTO uncovered
      FROM jsonb_array_elements(pending) WITH ORDINALITY p(value, ord)
     WHERE NOT decl @> jsonb_build_array(p.value)
     ORDER BY p.ord LIMIT 1;
    IF uncovered IS NOT NULL THEN
      refusal := jsonb_build_object('kind', 'checkpoint',
        'details', jsonb_build_object('partition', uncovered ->> 'partition', 'projection', uncovered ->> 'name'));
    END IF;
  END IF;
  IF refusal IS NOT NULL THEN
    refusal := refusal || jsonb_build_object('code', 'sync.schema_not_ready',
                                             'message', 'server schema is not ready for this request');
  END IF;

  RETURN jsonb_build_object('ready', refusal IS NULL,
                            'storedSchemaVersion', stored,
                            'runningSchemaVersion', running,
                            'logEpoch', epoch,
                            'pending', pending,
                            'refusal', refusal);
END
$$;
COMMENT ON FUNCTION syncular.serve_gate(text, jsonb, integer) IS
'RFC 0007 §4 readServeGate + serveGateRefusal. partition: the request''s partition; checkpoints: the caller''s '
'declarations, a JSON array of {partition, name, schemaVersion} (NULL/[] = none; matched on partition + name '
'only); running_version: the served schema version, default sync_settings.compiled->>''version''. Reads in ONE '
'SELECT the stored schema version (0 without a marker), the partition''s log epoch (null without a registry row) '
'and every pending checkpoint (schema_version = running, state <> activated, ALL partitions, ordered by '
'(partition, name) COLLATE "C"). Returns {ready, storedSchemaVersion, runningSchemaVersion, logEpoch, pending: '
'[{partition, name}], refusal}; refusal is null or {kind: "schema" | "checkpoint", code: "sync.schema_not_ready", '
'message: "server schema is not ready for this request", details}, details being '
'{"storedSchemaVersion": n, "runningSchemaVersion": n} (stored > running, checked first) or '
'{"partition": p, "projection": name} (first uncovered pending checkpoint). Never raises for a not-ready state. '
'Errors: sync.storage.invalid_checkpoints (22023) for bad declarations; sync.storage.schema_not_registered (55000) '
'when no running version is given and no compiled schema is registered. STABLE: reads the calling statement''s '
'snapshot. The epoch kind (a token that changed between two reads) is evaluated by the engine, see '
'_serve_gate_check.';

CREATE OR REPLACE FUNCTION syncular._serve_gate_check(partition text, running_version integer,
  token jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  raw text := current_setting('syncular.checkpoints', true);
  decl jsonb := '[]';
  gate jsonb;
  now_token jsonb;
BEGIN
  IF raw IS NOT NULL AND btrim(raw) <> '' THEN
    BEGIN
      decl := raw::jsonb;
    EXCEPTION WHEN invalid_text_representation THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'the syncular.checkpoints setting is not valid JSON', jsonb_build_object('reason', 'not_json'));
    END;
  END IF;
  gate := syncular.serve_gate(_serve_gate_check.partition, decl, _serve_gate_check.running_version);
  IF NOT (gate ->> 'ready')::boolean THEN
    PERFORM syncular._raise('sync.schema_not_ready', 'server schema is not ready for this request',
                            gate -> 'refusal' -> 'details');
  END IF;
  -- §4.2 serveGateTokenChanged: after schema and checkpoint, the token of an earlier read
  now_token := jsonb_build_object('storedSchemaVersion', gate -> 'storedSchemaVersion',
                                  'logEpoch', gate -> 'logEpoch');
  IF _serve_gate_check.token IS NOT NULL AND jsonb_typeof(_serve_gate_check.token) <> 'null'
     AND EXISTS (SELECT 1 FROM jsonb_each(_serve_gate_check.token) t
                  WHERE t.key IN ('storedSchemaVersion', 'logEpoch')
                    AND t.value IS DISTINCT FROM now_token -> t.key) THEN
    PERFORM syncular._raise('sync.schema_not_ready', 'server schema is not ready for this request',
                            '{"logEpochChanged": true}'::jsonb);
  END IF;
  RETURN now_token;
END
$$;
COMMENT ON FUNCTION syncular._serve_gate_check(text, integer, jsonb) IS
'Internal; the C engine''s serve gate (RFC 0007 §4.4, src/gate.c): called at the entry gate of every round, in every '
'push commit right after the partition lock, and in the pull''s snapshot before any subscription is served. STABLE, '
'so its reads use the calling statement''s snapshot (the engine calls it read-only inside the pull snapshot). '
'Declarations come from the setting syncular.checkpoints (JSON array text as for serve_gate; unset or empty = '
'none), set by the gateway with SET syncular.checkpoints = ''[...]''. token: NULL, or an earlier read''s token '
'(its members storedSchemaVersion and/or logEpoch are compared; others ignored). Returns the gate token '
'{storedSchemaVersion (0 without a marker), logEpoch (null without a registry row)}. Refusals, in order, all '
'sync.schema_not_ready (SQLSTATE 55000, message "server schema is not ready for this request"): schema, DETAIL '
'{"code":"sync.schema_not_ready","details":{"storedSchemaVersion":n,"runningSchemaVersion":n}}; checkpoint, '
'details {"partition":p,"projection":name}; epoch (a member of token differs from the current read), details '
'{"logEpochChanged":true}. Errors: sync.storage.invalid_checkpoints (22023) for a bad setting. Writes nothing.';

-- ---------------------------------------------------------------------------------------------
-- ensure_schema hooks and the readiness report

CREATE OR REPLACE FUNCTION syncular._checkpoint_barrier(checkpoints jsonb, running_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  u record;
BEGIN
  SELECT * INTO u FROM syncular._first_undeclared_checkpoint(_checkpoint_barrier.checkpoints,
                                                            _checkpoint_barrier.running_version);
  IF u.name IS NOT NULL THEN
    PERFORM syncular._raise('sync.storage.checkpoint_incomplete',
      'a declared backfill checkpoint is not activated and this caller did not declare it',
      jsonb_build_object('phase', 'backfill_checkpoint', 'partition', u.partition, 'name', u.name));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_barrier(jsonb, integer) IS
'Internal; ensure_schema''s checkpoint barrier (RFC 0007 §3.4 step 3), to run before the schema marker is read '
'(so also on a same-version open). Raises sync.storage.checkpoint_incomplete (SQLSTATE 55000, message "a declared '
'backfill checkpoint is not activated and this caller did not declare it", details {phase: '
'"backfill_checkpoint", partition, name} of the first offender in (partition, name) order) when a checkpoint with '
'schema_version = running_version and state <> activated, in ANY partition, is not covered by checkpoints (JSON '
'array of {partition, name, schemaVersion}). Errors: sync.storage.invalid_checkpoints (22023). Writes nothing.';

CREATE OR REPLACE FUNCTION syncular._install_checkpoints(checkpoints jsonb, version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  d record;
BEGIN
  IF _install_checkpoints.version IS NULL OR _install_checkpoints.version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'the schema version of a bump must be >= 1', jsonb_build_object('field', 'version'));
  END IF;
  FOR d IN SELECT * FROM syncular._checkpoint_declarations(_install_checkpoints.checkpoints) LOOP
    PERFORM syncular._install_checkpoint(d.partition, d.name, d.schema_version);
  END LOOP;
  -- 0.30.4: every migration raises the fence of every known partition, never lowering one
  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  SELECT p.partition, _install_checkpoints.version FROM syncular.sync_partitions p
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
COMMENT ON FUNCTION syncular._install_checkpoints(jsonb, integer) IS
'Internal; ensure_schema hook, called inside the bump transaction right after the marker write (RFC 0007 §3.4 '
'step 6.4, §5.2). checkpoints: JSON array of {partition, name, schemaVersion} (NULL/[] = none); version: the new '
'schema version. Installs every declaration with its own schemaVersion (declared row unless it exists; fence '
'raised to that version, max semantics), then raises the fence of every partition in sync_partitions to version, '
'never lowering one (0.30.4). Errors: sync.storage.invalid_checkpoints (22023); a failure rolls back with the bump.';

CREATE OR REPLACE FUNCTION syncular._check_physical_layout(compiled jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  msg constant text := 'a synced table does not match the storage layout the running code reads and writes';
  meta_names constant text[] := ARRAY['_sync_partition', '_sync_row_id', '_sync_server_version',
                                      '_sync_scopes', '_sync_payload', '_sync_column_versions'];
  meta_types constant text[] := ARRAY['TEXT', 'TEXT', 'BIGINT', 'JSONB', 'BYTEA', 'BYTEA'];
  meta_notnull constant boolean[] := ARRAY[true, true, true, true, true, false];
  app_schema text;
  t jsonb;
  tname text;
  rel regclass;
  expected text[];
  col text;
  a record;
  i integer;
BEGIN
  app_schema := coalesce(compiled ->> 'appSchema',
                         (SELECT s.app_schema FROM syncular.sync_settings s WHERE s.id = 1));
  IF app_schema IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no app schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  FOR t IN SELECT e.value FROM jsonb_array_elements(coalesce(compiled -> 'tables', '[]'::jsonb))
                                 WITH ORDINALITY e(value, ord) ORDER BY e.ord LOOP
    tname := t ->> 'name';
    -- the relation the row statements use: the quoted, schema-qualified identifier
    rel := to_regclass(format('%I.%I', app_schema, tname));

    -- 1. no catalog columns at all
    IF rel IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute at
                                   WHERE at.attrelid = rel AND at.attnum > 0 AND NOT at.attisdropped) THEN
      PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
        jsonb_build_object('phase', 'storage_migration', 'table', tname, 'reason', 'missing_table'));
    END IF;

    -- 2. every expected column, in table-column order
    expected := ARRAY['_sync_partition', '_sync_row_id'];
    IF coalesce((t ->> 'materialize')::boolean, true) THEN
      expected := expected || ARRAY(SELECT c.value ->> 'name'
                                      FROM jsonb_array_elements(coalesce(t -> 'columns', '[]'::jsonb))
                                           WITH ORDINALITY c(value, ord) ORDER BY c.ord);
    END IF;
    expected := expected || ARRAY['_sync_server_version', '_sync_scopes', '_sync_payload',
                                  '_sync_column_versions'];
    FOREACH col IN ARRAY expected LOOP
      IF NOT EXISTS (SELECT 1 FROM pg_attribute at
                      WHERE at.attrelid = rel AND at.attname = col AND at.attnum > 0
                        AND NOT at.attisdropped) THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', col, 'reason', 'missing_column'));
      END IF;
    END LOOP;

    -- 3. type, then nullability, of the six meta columns in declaration order
    FOR i IN 1 .. 6 LOOP
      SELECT format_type(at.atttypid, at.atttypmod) AS typ, at.attnotnull AS notnull INTO a
        FROM pg_attribute at
       WHERE at.attrelid = rel AND at.attname = meta_names[i] AND at.attnum > 0 AND NOT at.attisdropped;
      IF upper(a.typ) <> meta_types[i] THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', meta_names[i], 'reason', 'type',
                             'expected', meta_types[i], 'actual', a.typ));
      END IF;
      IF a.notnull <> meta_notnull[i] THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', meta_names[i], 'reason', 'nullability',
            'expected', CASE WHEN meta_notnull[i] THEN 'not_null' ELSE 'nullable' END,
            'actual', CASE WHEN a.notnull THEN 'not_null' ELSE 'nullable' END));
      END IF;
    END LOOP;

    -- 4. primary key = (_sync_partition, _sync_row_id), checked for every catalog column
    FOR a IN SELECT at.attname::text AS attname, coalesce(k.ord, 0) AS pkpos
               FROM pg_attribute at
               LEFT JOIN (SELECT u.attnum, u.ord
                            FROM pg_index ix,
                                 unnest(ix.indkey::int2[]) WITH ORDINALITY u(attnum, ord)
                           WHERE ix.indrelid = rel AND ix.indisprimary) k ON k.attnum = at.attnum
              WHERE at.attrelid = rel AND at.attnum > 0 AND NOT at.attisdropped
              ORDER BY at.attnum LOOP
      IF a.pkpos <> (CASE a.attname WHEN '_sync_partition' THEN 1 WHEN '_sync_row_id' THEN 2 ELSE 0 END) THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', a.attname, 'reason', 'primary_key'));
      END IF;
    END LOOP;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._check_physical_layout(jsonb) IS
'Internal; ensure_schema hook for a same-version open, after the stored-layout check (RFC 0007 §6.2). compiled: '
'the compiled schema (docs/compiled-schema.md). For each table in schema order the relation is resolved exactly '
'as the row statements name it, to_regclass(format(''%I.%I'', appSchema, name)), so mixed-case names work; reads '
'pg_attribute, format_type and pg_index (indisprimary, indkey ordinality). First failure wins, raising '
'sync.storage.physical_layout_mismatch (SQLSTATE 55000, message "a synced table does not match the storage layout '
'the running code reads and writes") with details {phase: "storage_migration", table, reason: "missing_table"} | '
'{phase, table, column, reason: "missing_column"} | {phase, table, column, reason: "type", expected '
'(TEXT/BIGINT/JSONB/BYTEA), actual (format_type text)} | {phase, table, column, reason: "nullability", expected, '
'actual ("not_null"/"nullable")} | {phase, table, column, reason: "primary_key"}. App column types/nullability are not checked; extra non-PK columns are allowed. Also '
'sync.storage.schema_not_registered (55000) when no app schema is known. Writes nothing.';

-- the cause object {code, message, details} of a caught catalogue error, or NULL when the error
-- does not carry this extension's JSON detail
CREATE OR REPLACE FUNCTION syncular._error_cause(message text, detail text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d jsonb;
BEGIN
  IF detail IS NULL OR detail !~ '^\{"code": ' THEN
    RETURN NULL;
  END IF;
  d := detail::jsonb;
  RETURN jsonb_build_object('code', d ->> 'code', 'message', message, 'details', d -> 'details');
END
$$;
COMMENT ON FUNCTION syncular._error_cause(text, text) IS
'Internal. Turns a caught catalogue error (MESSAGE_TEXT, PG_EXCEPTION_DETAIL) into {code, message, details}; '
'NULL when the detail is not {"code": ...} JSON.';

CREATE OR REPLACE FUNCTION syncular.readiness(checkpoints jsonb DEFAULT '[]')
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  running integer;
  stored bigint;
  u record;
  cause jsonb;
  msg text;
  det text;
BEGIN
  -- validate the declarations first: a bad list is a caller error, not a readiness state
  PERFORM count(*) FROM syncular._checkpoint_declarations(readiness.checkpoints);

  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL OR jsonb_typeof(compiled -> 'version') IS DISTINCT FROM 'number' THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'schema_compile', 'schemaVersion', NULL,
      'cause', jsonb_build_object('code', 'sync.storage.schema_not_registered',
                                  'message', 'no compiled schema is registered; call syncular.ensure_schema first',
                                  'details', NULL));
  END IF;
  running := (compiled ->> 'version')::integer;

  -- ensure_schema order (§3.4): the checkpoint barrier, then the marker, then the same-version checks
  SELECT * INTO u FROM syncular._first_undeclared_checkpoint(readiness.checkpoints, running);
  IF u.name IS NOT NULL THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'backfill_checkpoint', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.checkpoint_incomplete',
        'message', 'a declared backfill checkpoint is not activated and this caller did not declare it',
        'details', jsonb_build_object('phase', 'backfill_checkpoint', 'partition', u.partition,
                                      'name', u.name)));
  END IF;

  SELECT m.schema_version INTO stored FROM syncular.sync_schema_meta m WHERE m.id = 1;
  IF stored IS NULL OR stored < running THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.schema_migration_pending',
        'message', 'stored schema version is older than the registered schema; run syncular.ensure_schema',
        'details', jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored,
                                      'runningSchemaVersion', running)));
  ELSIF stored > running THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.schema_newer',
        'message', 'stored schema version is newer than the running schema; refusing to run an older server',
        'details', jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored,
                                      'runningSchemaVersion', running)));
  END IF;

  BEGIN
    PERFORM syncular._check_stored_layout(compiled);
    PERFORM syncular._check_physical_layout(compiled);
  EXCEPTION WHEN object_not_in_prerequisite_state THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    cause := syncular._error_cause(msg, det);
    IF cause IS NULL THEN
      RAISE;
    END IF;
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
                              'cause', cause);
  END;

  RETURN jsonb_build_object('ready', true, 'phase', NULL, 'schemaVersion', running, 'cause', NULL);
END
$$;
COMMENT ON FUNCTION syncular.readiness(jsonb) IS
'RFC 0007 §7 ensureSyncServerReady, read-only. checkpoints: this process''s declarations (JSON array of '
'{partition, name, schemaVersion}). Returns {ready, phase, schemaVersion, cause}: phase null when ready; '
'"schema_compile" when no compiled schema is registered; "backfill_checkpoint" when a checkpoint at the running '
'version, in any partition, is neither activated nor declared (cause code sync.storage.checkpoint_incomplete); '
'"storage_migration" when the stored schema is newer (sync.storage.schema_newer) or older / absent '
'(sync.storage.schema_migration_pending), or the same-version stored-layout (sync.storage.stored_layout_mismatch) '
'or physical check (sync.storage.physical_layout_mismatch) fails. schemaVersion: the registered (running) '
'version; cause: {code, message, details} of the underlying error. Never raises for a not-ready state; raises '
'sync.storage.invalid_checkpoints (22023) for a bad declaration list. Writes nothing. SECURITY DEFINER (serving '
'surface, see 90_grants.sql): it only reads the catalog.';
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

-- The wall clock in epoch ms, or the pinned value.
CREATE FUNCTION syncular._reaction_now(now_ms bigint) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$$;
COMMENT ON FUNCTION syncular._reaction_now(bigint) IS
  'Internal. now_ms when not NULL, else the wall clock (clock_timestamp()) in Unix epoch milliseconds, truncated. Raises nothing.';

-- A non-negative (or positive) safe-integer argument, else sync.storage.invalid_limit.
CREATE FUNCTION syncular._reaction_arg(name text, value bigint, lo bigint, hi bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF value IS NULL OR value < lo OR value > hi THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', format('%s must be an integer in %s..%s', name, lo, hi),
                            jsonb_build_object('argument', name, 'value', value, 'min', lo, 'max', hi));
  END IF;
  RETURN value;
END
$$;
COMMENT ON FUNCTION syncular._reaction_arg(text, bigint, bigint, bigint) IS
  'Internal. Returns value when lo <= value <= hi; raises sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) when it is NULL or outside the range.';

-- Raises sync.storage.invalid_reaction.
CREATE FUNCTION syncular._invalid_reaction(idx integer, field text, reason text, extra jsonb DEFAULT '{}')
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.invalid_reaction', 'invalid reaction record',
    jsonb_strip_nulls(jsonb_build_object('index', idx, 'field', field, 'reason', reason)) || coalesce(extra, '{}'));
END
$$;
COMMENT ON FUNCTION syncular._invalid_reaction(integer, text, text, jsonb) IS
  'Internal. Always raises sync.storage.invalid_reaction (SQLSTATE 22023), message "invalid reaction record", details {index?, field, reason} || extra.';

-- A JSON number that is an integer in lo..hi, or NULL.
CREATE FUNCTION syncular._reaction_int(v jsonb, lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'number'
                   AND (v #>> '{}')::numeric = trunc((v #>> '{}')::numeric)
                   AND (v #>> '{}')::numeric BETWEEN lo AND hi
              THEN (v #>> '{}')::numeric::bigint END
$$;
COMMENT ON FUNCTION syncular._reaction_int(jsonb, bigint, bigint) IS
  'Internal. The integer value of v when v is a JSON number with an integral value in lo..hi (1.0 counts as 1), else NULL. Raises nothing.';

-- The string member `field` of reaction record number idx: present, a JSON string, non-empty,
-- at most max_bytes of UTF-8; otherwise sync.storage.invalid_reaction naming the field.
CREATE FUNCTION syncular._reaction_text(idx integer, rec jsonb, field text, max_bytes integer)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v     jsonb := rec -> field;
  t     text;
  bytes integer;
BEGIN
  IF v IS NULL THEN PERFORM syncular._invalid_reaction(idx, field, 'missing'); END IF;
  IF jsonb_typeof(v) <> 'string' THEN PERFORM syncular._invalid_reaction(idx, field, 'not_string'); END IF;
  t := v #>> '{}';
  IF t = '' THEN PERFORM syncular._invalid_reaction(idx, field, 'empty'); END IF;
  bytes := octet_length(convert_to(t, 'UTF8'));
  IF bytes > max_bytes THEN
    PERFORM syncular._invalid_reaction(idx, field, 'too_long',
                                       jsonb_build_object('bytes', bytes, 'limit', max_bytes));
  END IF;
  RETURN t;
END
$$;
COMMENT ON FUNCTION syncular._reaction_text(integer, jsonb, text, integer) IS
  'Internal. The string member field of reaction record idx (push-and-pull.md §2.8): present, a JSON string, non-empty, at most max_bytes UTF-8 bytes. Raises sync.storage.invalid_reaction (SQLSTATE 22023; details {index, field, reason (missing, not_string, empty, too_long), bytes?, limit?}) otherwise.';

CREATE FUNCTION syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
                                            commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n         integer;
  i         integer;
  rec       jsonb;
  k         text;
  v         jsonb;
  ts        bigint;
  keys      text[] := '{}';
  types     text[] := '{}';
  versions  integer[] := '{}';
  payloads  jsonb[] := '{}';
  maxes     integer[] := '{}';
  r_key     text;
  r_type    text;
  r_version bigint;
  r_max     bigint;
  bytes     integer;
  inserted  integer;
BEGIN
  IF partition IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'partition', 'missing'); END IF;
  IF client_id IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'clientId', 'missing'); END IF;
  IF client_commit_id IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'clientCommitId', 'missing'); END IF;
  IF commit_seq IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'commitSeq', 'missing'); END IF;
  IF records IS NULL OR jsonb_typeof(records) = 'null' THEN
    RETURN 0;
  END IF;
  IF jsonb_typeof(records) <> 'array' THEN
    PERFORM syncular._invalid_reaction(NULL, 'records', 'not_array');
  END IF;
  n := jsonb_array_length(records);
  IF n > 100 THEN
    PERFORM syncular._invalid_reaction(NULL, 'records', 'too_many', jsonb_build_object('count', n, 'limit', 100));
  END IF;

  -- validate every record before writing any
  FOR i IN 0 .. n - 1 LOOP
    rec := records -> i;
    IF jsonb_typeof(rec) <> 'object' THEN
      PERFORM syncular._invalid_reaction(i, 'record', 'not_object');
    END IF;
    FOR k IN SELECT x FROM jsonb_object_keys(rec) x ORDER BY x LOOP
      IF k NOT IN ('key', 'type', 'version', 'payload', 'maxAttempts') THEN
        PERFORM syncular._invalid_reaction(i, k, 'unknown_field');
      END IF;
    END LOOP;

    -- key: non-empty string, <= 256 bytes, unique within the commit
    r_key := syncular._reaction_text(i, rec, 'key', 256);
    IF r_key = ANY (keys) THEN
      PERFORM syncular._invalid_reaction(i, 'key', 'duplicate');
    END IF;

    -- type: non-empty string, <= 128 bytes
    r_type := syncular._reaction_text(i, rec, 'type', 128);

    -- version: positive i32
    v := rec -> 'version';
    IF v IS NULL THEN PERFORM syncular._invalid_reaction(i, 'version', 'missing'); END IF;
    r_version := syncular._reaction_int(v, 1, 2147483647);
    IF r_version IS NULL THEN
      PERFORM syncular._invalid_reaction(i, 'version', 'not_positive_i32');
    END IF;

    -- payload: any JSON value (null included), <= 65,536 bytes compact, <= 16 levels deep
    v := rec -> 'payload';
    IF v IS NULL THEN PERFORM syncular._invalid_reaction(i, 'payload', 'missing'); END IF;
    bytes := octet_length(convert_to(syncular._compact_json(v), 'UTF8'));
    IF bytes > 65536 THEN
      PERFORM syncular._invalid_reaction(i, 'payload', 'too_large', jsonb_build_object('bytes', bytes, 'limit', 65536));
    END IF;
    -- a 17th level exists iff some value at path depth 16 is itself an object or an array
    IF jsonb_path_exists(v, 'strict $.**{16} ? (@.type() == "object" || @.type() == "array")') THEN
      PERFORM syncular._invalid_reaction(i, 'payload', 'too_deep', jsonb_build_object('limit', 16));
    END IF;

    -- maxAttempts: optional (absent or null = 10), integer 1..100
    v := rec -> 'maxAttempts';
    IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
      r_max := 10;
    ELSE
      r_max := syncular._reaction_int(v, 1, 100);
      IF r_max IS NULL THEN
        PERFORM syncular._invalid_reaction(i, 'maxAttempts', 'out_of_range', jsonb_build_object('min', 1, 'max', 100));
      END IF;
    END IF;

    keys := keys || r_key;
    types := types || r_type;
    versions := versions || r_version::integer;
    payloads := payloads || (rec -> 'payload');
    maxes := maxes || r_max::integer;
  END LOOP;

  IF n = 0 THEN
    RETURN 0;
  END IF;
  ts := syncular._reaction_now(now_ms);
  -- a key already present (the same commit enqueued before) is kept as it is: at most once
  INSERT INTO syncular.sync_reactions AS r
    (partition, idempotency_key, type, version, payload, source_client_id, source_client_commit_id,
     source_commit_seq, created_at_ms, available_at_ms, status, attempts, max_attempts)
  SELECT _enqueue_reactions.partition,
         '[' || to_json(_enqueue_reactions.partition)::text || ',' || to_json(_enqueue_reactions.client_id)::text
             || ',' || to_json(_enqueue_reactions.client_commit_id)::text || ',' || to_json(x.k)::text || ']',
         x.t, x.ver, x.p, _enqueue_reactions.client_id, _enqueue_reactions.client_commit_id,
         _enqueue_reactions.commit_seq, ts, ts, 'pending', 0, x.m
    FROM unnest(keys, types, versions, payloads, maxes) WITH ORDINALITY AS x(k, t, ver, p, m, ord)
   ORDER BY x.ord
  ON CONFLICT ON CONSTRAINT sync_reactions_pkey DO NOTHING;
  GET DIAGNOSTICS inserted = ROW_COUNT;
  RETURN inserted;
END
$$;
COMMENT ON FUNCTION syncular._enqueue_reactions(text, text, text, bigint, jsonb, bigint) IS
$$Internal; called by the C push engine with the reaction planner's result for a new, validated commit, in the push transaction (push-and-pull.md §2.8; §6.9). Rejected commits and replays never call it.
Arguments: partition, client_id, client_commit_id, commit_seq of the commit; records = JSON array of {key, type, version, payload, maxAttempts?} (SQL NULL, JSON null and [] enqueue nothing); now_ms = creation time in epoch ms (NULL = wall clock; the engine may pass the commit's created_at_ms).
Rules (all records are checked before any is written): at most 100 records; each an object with no other members; key a non-empty string of at most 256 UTF-8 bytes, unique within the call; type a non-empty string of at most 128 UTF-8 bytes; version an integer 1..2147483647; payload present, any JSON value, compact JSON (syncular._compact_json) at most 65,536 UTF-8 bytes, nesting of objects/arrays at most 16 levels ({"a":1} is 1 level); maxAttempts absent/null (= 10) or an integer 1..100. Integral JSON numbers such as 3.0 count as integers.
Each record becomes a sync_reactions row: idempotency_key = compact JSON text ["<partition>","<client_id>","<client_commit_id>","<key>"] (JSON string escaping as JSON.stringify), status pending, attempts 0, created_at_ms = available_at_ms = now. A row whose idempotency_key already exists is left as it is (ON CONFLICT DO NOTHING).
Returns the number of rows inserted.
Errors: sync.storage.invalid_reaction (SQLSTATE 22023; message "invalid reaction record"; details {index?, field, reason, ...}: field is partition / clientId / clientCommitId / commitSeq (reason missing), records (not_array; too_many with count, limit), or the record member key / type / version / payload / maxAttempts / record / <unknown member>, with reason missing, not_string, empty, too_long (bytes, limit), duplicate, not_positive_i32, too_large (bytes, limit), too_deep (limit), out_of_range (min, max), not_object, unknown_field). The engine turns any error here into a server failure (sync.internal_error, nothing persisted).$$;

CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10,
                                         lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts bigint;
BEGIN
  PERFORM syncular._reaction_arg('limit', claim_reactions."limit", 1, 1000);
  PERFORM syncular._reaction_arg('lease_ms', claim_reactions.lease_ms, 1, 9007199254740991);
  IF claim_reactions.owner IS NULL OR claim_reactions.owner = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_reaction', 'a lease owner must be a non-empty string',
                            jsonb_build_object('argument', 'owner'));
  END IF;
  ts := syncular._reaction_now(now_ms);
  RETURN QUERY
  WITH due AS (
    SELECT r.idempotency_key
      FROM syncular.sync_reactions r
     WHERE r.partition = claim_reactions.partition
       AND ((r.status = 'pending' AND r.available_at_ms <= ts)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= ts))
     ORDER BY r.available_at_ms, r.created_at_ms, r.idempotency_key
     LIMIT claim_reactions."limit"
       FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE syncular.sync_reactions r
       SET status = 'leased', lease_owner = claim_reactions.owner,
           lease_expires_at_ms = ts + claim_reactions.lease_ms, attempts = r.attempts + 1
      FROM due
     WHERE r.partition = claim_reactions.partition AND r.idempotency_key = due.idempotency_key
    RETURNING r.*
  )
  SELECT c.* FROM claimed c ORDER BY c.available_at_ms, c.created_at_ms, c.idempotency_key;
END
$$;
COMMENT ON FUNCTION syncular.claim_reactions(text, text, integer, bigint, bigint) IS
$$Claims due reactions of a partition for a worker (push-and-pull.md §2.8, "Delivery"; data-model-and-storage.md §8): in one statement, a FOR UPDATE SKIP LOCKED CTE picks up to "limit" rows that are pending with available_at_ms <= now, or leased with lease_expires_at_ms <= now (an expired lease), in (available_at_ms, created_at_ms, idempotency_key) order, skipping rows another transaction holds; each becomes status leased, lease_owner = owner, lease_expires_at_ms = now + lease_ms, attempts + 1 (every claim counts as an attempt).
Arguments: owner = the worker's lease identity (non-empty); limit 1..1000 (default 10); lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock).
Returns the claimed rows (sync_reactions columns, after the update) in claim order. Concurrent claimers never receive the same row while its lease is live. SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for limit or lease_ms; sync.storage.invalid_reaction (22023; details {argument: "owner"}) for a NULL or empty owner.$$;

CREATE FUNCTION syncular.renew_reaction_lease(partition text, idempotency_key text, owner text,
                                              lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._reaction_arg('lease_ms', renew_reaction_lease.lease_ms, 1, 9007199254740991);
  UPDATE syncular.sync_reactions r
     SET lease_expires_at_ms = syncular._reaction_now(now_ms) + renew_reaction_lease.lease_ms
   WHERE r.partition = renew_reaction_lease.partition
     AND r.idempotency_key = renew_reaction_lease.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = renew_reaction_lease.owner;
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.renew_reaction_lease(text, text, text, bigint, bigint) IS
$$Extends a worker's lease (push-and-pull.md §2.8): when the row is leased and lease_owner = owner, sets lease_expires_at_ms = now + lease_ms and returns true; otherwise (another owner reclaimed it, it was completed, failed or dead-lettered, or it does not exist) changes nothing and returns false. A lease that expired but was not reclaimed yet is still the owner's and can be renewed.
Arguments: lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for lease_ms.$$;

CREATE FUNCTION syncular.complete_reaction(partition text, idempotency_key text, owner text,
                                           now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE syncular.sync_reactions r
     SET status = 'completed', completed_at_ms = syncular._reaction_now(now_ms),
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = complete_reaction.partition
     AND r.idempotency_key = complete_reaction.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = complete_reaction.owner;
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.complete_reaction(text, text, text, bigint) IS
$$Marks a delivered reaction completed (push-and-pull.md §2.8): only when the row is leased and lease_owner = owner (the current lease holder; an expired lease not yet reclaimed still counts). Sets status completed, completed_at_ms = now, clears lease_owner and lease_expires_at_ms, returns true; otherwise changes nothing and returns false (a stale owner after a reclaim, a row already completed, pending or dead-lettered, an unknown key).
now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role. Raises nothing of its own.$$;

CREATE FUNCTION syncular.fail_reaction(partition text, idempotency_key text, owner text, failure jsonb,
                                       permanent boolean DEFAULT false, base_ms bigint DEFAULT 1000,
                                       cap_ms bigint DEFAULT 300000, now_ms bigint DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts         bigint;
  new_status text;
BEGIN
  PERFORM syncular._reaction_arg('base_ms', fail_reaction.base_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('cap_ms', fail_reaction.cap_ms, 0, 9007199254740991);
  ts := syncular._reaction_now(now_ms);
  UPDATE syncular.sync_reactions r
     SET status = CASE WHEN coalesce(fail_reaction.permanent, false) OR r.attempts >= r.max_attempts
                       THEN 'dead-letter' ELSE 'pending' END,
         -- pending: now + min(base * 2^(attempts-1), cap); dead-letter: the time it died.
         -- Exponents above 64 cannot change the result (base >= 1 then exceeds any cap).
         available_at_ms = CASE WHEN coalesce(fail_reaction.permanent, false) OR r.attempts >= r.max_attempts
                                THEN ts
                                ELSE ts + least(fail_reaction.base_ms::numeric
                                                  * power(2::numeric, least(greatest(r.attempts - 1, 0), 64)),
                                                fail_reaction.cap_ms::numeric)::bigint END,
         last_failure = fail_reaction.failure,
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = fail_reaction.partition
     AND r.idempotency_key = fail_reaction.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = fail_reaction.owner
  RETURNING r.status INTO new_status;
  RETURN new_status;
END
$$;
COMMENT ON FUNCTION syncular.fail_reaction(text, text, text, jsonb, boolean, bigint, bigint, bigint) IS
$$Records a failed delivery (push-and-pull.md §2.8): only when the row is leased and lease_owner = owner. Stores failure in last_failure (as given, NULL included) and clears the lease; then, when permanent is true or attempts >= max_attempts, status dead-letter with available_at_ms = now (the dead-letter time, which prune_reactions ages); otherwise status pending with available_at_ms = now + min(base_ms * 2^(attempts - 1), cap_ms), where attempts counts the claims so far (1 after the first claim: base_ms, then 2*base_ms, 4*base_ms, ... up to cap_ms).
Arguments: failure = any JSON the worker wants to keep (e.g. {"message": ...}); permanent (default false); base_ms 0..2^53-1 (default 1,000); cap_ms 0..2^53-1 (default 300,000); now_ms = epoch ms (NULL = wall clock).
Returns the new status ('pending' or 'dead-letter'), or NULL when the caller is not the current lease owner (nothing changes). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for base_ms or cap_ms.$$;

CREATE FUNCTION syncular.retry_dead_letter_reaction(partition text, idempotency_key text,
                                                    now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE syncular.sync_reactions r
     SET status = 'pending', attempts = 0, available_at_ms = syncular._reaction_now(now_ms),
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = retry_dead_letter_reaction.partition
     AND r.idempotency_key = retry_dead_letter_reaction.idempotency_key
     AND r.status = 'dead-letter';
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text, text, bigint) IS
$$Operator action (push-and-pull.md §2.8, retryDeadLetterReaction): a dead-letter row becomes pending again with attempts 0 and available_at_ms = now (claimable at once); last_failure is kept until the next failure. Returns true when a dead-letter row was moved, false otherwise (unknown key, or a row in another status: nothing changes).
now_ms = epoch ms (NULL = wall clock). Owner-only. Raises nothing of its own.$$;

CREATE FUNCTION syncular.prune_reactions(partition text,
                                         completed_older_than_ms bigint DEFAULT 2592000000,
                                         dead_letter_older_than_ms bigint DEFAULT 7776000000,
                                         max_rows integer DEFAULT 1000, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts        bigint;
  completed integer := 0;
  dead      integer := 0;
BEGIN
  PERFORM syncular._reaction_arg('completed_older_than_ms', prune_reactions.completed_older_than_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('dead_letter_older_than_ms', prune_reactions.dead_letter_older_than_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('max_rows', prune_reactions.max_rows, 1, 100000);
  ts := syncular._reaction_now(now_ms);

  WITH victims AS (
    SELECT r.idempotency_key
      FROM syncular.sync_reactions r
     WHERE r.partition = prune_reactions.partition AND r.status = 'completed'
       AND r.completed_at_ms < ts - prune_reactions.completed_older_than_ms
     ORDER BY r.completed_at_ms, r.idempotency_key
     LIMIT prune_reactions.max_rows
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM syncular.sync_reactions r USING victims v
   WHERE r.partition = prune_reactions.partition AND r.idempotency_key = v.idempotency_key;
  GET DIAGNOSTICS completed = ROW_COUNT;

  IF completed < prune_reactions.max_rows THEN
    WITH victims AS (
      SELECT r.idempotency_key
        FROM syncular.sync_reactions r
       WHERE r.partition = prune_reactions.partition AND r.status = 'dead-letter'
         AND r.available_at_ms < ts - prune_reactions.dead_letter_older_than_ms
       ORDER BY r.available_at_ms, r.idempotency_key
       LIMIT prune_reactions.max_rows - completed
         FOR UPDATE SKIP LOCKED
    )
    DELETE FROM syncular.sync_reactions r USING victims v
     WHERE r.partition = prune_reactions.partition AND r.idempotency_key = v.idempotency_key;
    GET DIAGNOSTICS dead = ROW_COUNT;
  END IF;
  RETURN completed + dead;
END
$$;
COMMENT ON FUNCTION syncular.prune_reactions(text, bigint, bigint, integer, bigint) IS
$$Operator maintenance (push-and-pull.md §2.8, pruneReactions; data-model-and-storage.md §8): deletes, in one bounded pass, completed rows with completed_at_ms < now - completed_older_than_ms (oldest first), then, with the rest of the budget, dead-letter rows dead-lettered before now - dead_letter_older_than_ms (available_at_ms, oldest first); at most max_rows in total. Rows locked by another transaction are skipped (FOR UPDATE SKIP LOCKED); pending and leased rows are never touched. Reactions are independent of the commit log and survive its pruning.
Arguments: completed_older_than_ms 0..2^53-1 (default 30 days = 2,592,000,000); dead_letter_older_than_ms 0..2^53-1 (default 90 days = 7,776,000,000); max_rows 1..100,000 (default 1,000); now_ms = epoch ms (NULL = wall clock).
Returns the number of rows deleted; call again while it returns max_rows. Owner-only.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}).$$;

CREATE VIEW syncular.reactions AS
SELECT r.partition,
       r.idempotency_key,
       (r.idempotency_key::jsonb ->> 3) AS key,
       r.type, r.version, r.status, r.attempts, r.max_attempts,
       r.created_at_ms, r.available_at_ms,
       r.lease_owner, r.lease_expires_at_ms, r.completed_at_ms, r.last_failure,
       ((r.status = 'pending' AND r.available_at_ms <= n.ms)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= n.ms)) AS due,
       r.source_client_id, r.source_client_commit_id, r.source_commit_seq,
       r.payload
  FROM syncular.sync_reactions r,
       LATERAL (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) n;
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
