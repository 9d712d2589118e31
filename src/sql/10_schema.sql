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
            || jsonb_build_object('rule', rule),
            CASE rule WHEN 'column_type' THEN
              'A column "type" is one of: string, integer, float, boolean, json, bytes, blob_ref, crdt.'
            END);
END
$$;
COMMENT ON FUNCTION syncular._schema_invalid(text, text, text, text, jsonb) IS
  'Internal. Always raises sync.storage.schema_invalid (SQLSTATE 22023) with the fixed `message` and details {table?, column?, ...extra, rule}; rule column_type adds a HINT listing the valid column types. data-model-and-storage.md §2.';

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
LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_compile_schema';

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
-- The errhint of a refused schema change: what a second, different ensure_schema can do instead.
CREATE FUNCTION syncular._schema_change_hint() RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT 'A registered schema changes only by an append-only bump: raise its version (schemaVersion '
         'or version) and only add tables, retire tables or append nullable columns. To discard the '
         'registration instead (test data), SELECT syncular.unregister_schema(<app schema>, '
         'drop_tables => true) and ensure_schema again.'
$$;
COMMENT ON FUNCTION syncular._schema_change_hint() IS
  'Internal. The errhint text of sync.storage.stored_layout_mismatch and sync.storage.schema_not_append_only raised by ensure_schema: how to change a registered schema (an append-only version bump) or discard it (syncular.unregister_schema).';

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
                             'column', coalesce(c ->> 'name', s ->> 'name', '')),
          syncular._schema_change_hint());
      END IF;
    END LOOP;
  END LOOP;
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (names)) THEN
      PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
        'stored schema layouts disagree with the configured schema at the same version',
        jsonb_build_object('phase', 'storage_migration', 'table', k),
        syncular._schema_change_hint());
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
  -- ordinary SQL writes to it are sync commits (32_capture.sql)
  PERFORM syncular._install_capture(app_schema, tbl ->> 'name');
END
$$;
COMMENT ON FUNCTION syncular._create_synced_table(text, jsonb) IS
  'Internal. CREATE TABLE app_schema.<table> for one compiled table: _sync_partition, _sync_row_id, the app columns when materialized (projection types, NOT NULL when non-nullable), _sync_server_version, _sync_scopes, _sync_payload, _sync_column_versions; PK (_sync_partition, _sync_row_id); then the capture triggers (syncular._install_capture). Raises the DDL error if the table exists. data-model-and-storage.md §6.';

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
  -- the engine's own rewrite (same data, new layout): not a sync commit of the capture triggers
  PERFORM syncular._capture_bypass(true);
  LOOP
    batch := NULL;
    EXECUTE stmt INTO batch, last_p, last_r USING last_p, last_r, old_n, new_n;
    EXIT WHEN batch IS NULL;
    total := total + batch;
    EXIT WHEN batch < 500;
  END LOOP;
  PERFORM syncular._capture_bypass(false);
  RETURN total;
END
$$;
COMMENT ON FUNCTION syncular._rewrite_rows(text, text, integer, integer, jsonb) IS
  'Internal. Bump step 5 for one synced table: re-encodes every _sync_payload from old_n to new_n columns (trailing NULLs, syncular._payload_append_nulls) and sets the projection columns listed in backfill ([{name, type}]) from syncular.decode_row (which reads the compiled schema in sync_settings, so that must already hold the new one). Walks (_sync_partition, _sync_row_id) keysets in batches of 500 with the capture triggers bypassed (not a sync commit); returns the number of rows rewritten. data-model-and-storage.md §7 step 5.';

-- ---------------------------------------------------------------------------------------------
-- ensure_schema

CREATE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_ensure_schema';
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
$$Registers, verifies or migrates the app's synced tables (SPEC §2.4 schema IR, §7.4 schema bumps; docs/compiled-schema.md).
Arguments: ir = schema IR, typegen (irVersion 1: schemaVersion, tables[{name, primaryKey, columns[{name, type, nullable, crdtType?, encrypted?}], scopes[{pattern, variable, column}], indexes?, references?[{column, parentTable, onDelete}], materialize?}]) or the plain server shape (version, scopes as "prefix:{variable}" or {pattern, column}); checkpoints = JSON array of RFC 0007 backfill-checkpoint declarations (accepted; installed by the barrier code); app_schema = schema holding the synced tables (default: the registered one, else the caller's current_schema()); one app schema per database.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE, then reads the marker: none -> creates every table and index and writes sync_schema_meta and sync_settings ("created"); same version -> verifies the stored layouts, writes nothing ("verified"); older -> append-only bump in the caller's transaction: retired tables dropped, new tables created, nullable columns added, sync_ix_* indexes rebuilt, payloads re-encoded with trailing NULLs (batches of 500), projection backfilled when materialize was turned on ("migrated").
Returns {schemaVersion, action, appSchema, tables[, previousSchemaVersion, created, dropped, altered, rewrittenRows]}.
Errors: sync.storage.schema_invalid (22023; details {table?, column?, rule}), sync.storage.checkpoint_incomplete (55000; {phase: "backfill_checkpoint", partition, name}), sync.storage.schema_newer (55000; {phase: "storage_migration", storedSchemaVersion, runningSchemaVersion}), sync.storage.schema_not_append_only (22023; {phase: "storage_migration", table, column, reason}), sync.storage.stored_layout_mismatch (55000; {phase: "storage_migration", table, column} | {phase, table}), sync.storage.physical_layout_mismatch (55000; {phase: "storage_migration", table, reason, ...}); DDL errors of PostgreSQL pass through. A refused second, different registration (another app_schema, a changed layout at the same version, a non-append-only change, an older version, a table left in the way) carries an errhint with the way out: an append-only version bump, the registered app_schema, or syncular.unregister_schema.$$;
