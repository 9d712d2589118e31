CREATE FUNCTION syncular.inject_fault(fault text, partition text, client_id text) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  IF NOT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
    -- raised here, not through _raise: a granted non-superuser need not be able to run _raise
    RAISE EXCEPTION 'only a superuser may inject a fault' USING ERRCODE = 'insufficient_privilege',
      DETAIL = '{"code": "sync.forbidden"}',
      HINT = 'inject_fault is a test seam: call it as a superuser (docs/testing-seams.md).';
  END IF;
  IF inject_fault.fault IS NULL OR inject_fault.partition IS NULL OR inject_fault.partition = ''
     OR inject_fault.client_id IS NULL OR inject_fault.client_id = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'inject_fault needs a fault, a partition and a client id', NULL);
  END IF;
  IF inject_fault.fault NOT IN ('idempotency_cache_miss') THEN
    PERFORM syncular._raise('sync.invalid_request', 'unknown fault',
                            jsonb_build_object('fault', inject_fault.fault, 'known', jsonb_build_array('idempotency_cache_miss')));
  END IF;
  INSERT INTO syncular.sync_faults AS f (fault, partition, client_id, armed_at_ms)
  VALUES (inject_fault.fault, inject_fault.partition, inject_fault.client_id, syncular.now_ms())
  ON CONFLICT (partition, client_id, fault) DO NOTHING;
END $$;
