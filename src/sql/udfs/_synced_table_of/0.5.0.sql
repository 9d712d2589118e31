-- what the guard reads, as the extension owner (the role running the DDL needs no privilege on
-- syncular.*; ddl_guard.c calls these through fmgr, without an ACL check)
CREATE FUNCTION syncular._synced_table_of(relid oid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM syncular.sync_settings s, jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1 AND to_regclass(format('%I.%I', s.app_schema, t ->> 'name'))::oid = relid
                    LIMIT 1), '')
$$;
