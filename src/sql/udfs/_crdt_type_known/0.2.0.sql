CREATE FUNCTION syncular._crdt_type_known(crdt_type text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT crdt_type = 'yjs-doc'
      OR EXISTS (SELECT 1 FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = _crdt_type_known.crdt_type)
$$;
