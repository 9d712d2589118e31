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
