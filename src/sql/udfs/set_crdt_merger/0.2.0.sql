CREATE FUNCTION syncular.set_crdt_merger(crdt_type text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF crdt_type IS NULL OR crdt_type = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'crdt_type must be a non-empty string',
                            jsonb_build_object('crdtType', crdt_type));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = set_crdt_merger.crdt_type;
  ELSE
    PERFORM syncular._check_hook_signature('crdt_merger', fn,
      ARRAY['bytea', 'bytea']::regtype[], 'bytea'::regtype, false,
      '(stored bytea, incoming bytea) RETURNS bytea, not STRICT');
    INSERT INTO syncular.sync_crdt_mergers AS m (crdt_type, fn) VALUES (set_crdt_merger.crdt_type, fn)
      ON CONFLICT ON CONSTRAINT sync_crdt_mergers_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
END
$$;
