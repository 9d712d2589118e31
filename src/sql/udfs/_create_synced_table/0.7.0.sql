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
  -- a tenth of each page left free, so that most updates stay on their page (HOT: no new index
  -- entry; docs/storage.md "Fillfactor"); the key in the "C" collation, compared by bytes like
  -- the catalog's keys (docs/storage.md "Collation of the keys")
  EXECUTE format('CREATE TABLE %I.%I (_sync_partition text COLLATE "C" NOT NULL, '
                 '_sync_row_id text COLLATE "C" NOT NULL, %s'
                 '_sync_server_version bigint NOT NULL, _sync_scopes jsonb NOT NULL, '
                 '_sync_payload bytea NOT NULL, _sync_column_versions bytea, '
                 'PRIMARY KEY (_sync_partition, _sync_row_id)) WITH (fillfactor = 90)',
                 app_schema, tbl ->> 'name', app_cols);
  -- ordinary SQL writes to it are sync commits (32_capture.sql)
  PERFORM syncular._install_capture(app_schema, tbl ->> 'name');
END
$$;
