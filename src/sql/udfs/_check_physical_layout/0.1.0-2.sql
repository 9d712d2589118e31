CREATE FUNCTION syncular._check_physical_layout(compiled jsonb)
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
