CREATE FUNCTION syncular._schema_change_hint() RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT 'A registered schema changes only by an append-only bump: raise its version (schemaVersion '
         'or version) and only add tables, retire tables or append nullable columns. To discard the '
         'registration instead (test data), SELECT syncular.unregister_schema(<app schema>, '
         'drop_tables => true) and ensure_schema again.'
$$;
