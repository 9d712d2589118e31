-- syncular install script, part 03: the clock seam and the fault seams (src/clock.c,
-- docs/testing-seams.md).  Both are testing and incident tools: the clock is moved with the
-- superuser-only settings syncular.clock_override_ms / syncular.clock_offset_ms, a fault is armed
-- with syncular.inject_fault, which only a superuser may call.

-- The engine's clock for the SQL and plpgsql paths (the C paths call the same function).
CREATE FUNCTION syncular.now_ms() RETURNS bigint
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_now_ms';
COMMENT ON FUNCTION syncular.now_ms() IS
$$The engine's clock: milliseconds since the Unix epoch (SPEC §3), the one "now" of every timestamp and deadline syncular writes or compares (leases §7.3.3, signed segment and blob URL expiry §5.4 §5.9.5, segment publication expiry and prune_segments, commit created_at_ms, client updated_at_ms, prune's default now, reactions, checkpoints). The wall clock at the call (like clock_timestamp()), unless the superuser-only settings move it: syncular.clock_override_ms (an absolute instant; empty = off) pins it, syncular.clock_offset_ms (signed ms) shifts it. No arguments, raises nothing. Not executable by PUBLIC: a role granted SELECT on a view that reads the clock (syncular.reactions, syncular.client_lag) needs EXECUTE on it too. docs/testing-seams.md.$$;

-- Armed faults (one-shot): the next matching lookup of the engine consumes the row.
CREATE TABLE syncular.sync_faults (
  fault       TEXT NOT NULL,
  partition   TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  armed_at_ms BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id, fault)
);
REVOKE ALL ON syncular.sync_faults FROM PUBLIC;
COMMENT ON TABLE syncular.sync_faults IS
'Test fault seams armed by syncular.inject_fault (superuser only): per (partition, client id, fault) one armed fault, consumed (deleted) by the first engine lookup it matches, in that lookup''s transaction. Faults: idempotency_cache_miss. Emptied by unregister_schema; not dumped. docs/testing-seams.md.';

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
COMMENT ON FUNCTION syncular.inject_fault(text, text, text) IS
$$Test fault seam (superuser only; SECURITY INVOKER, not executable by PUBLIC, and refused with sync.forbidden (SQLSTATE 42501) for any caller that is not a superuser even when granted). fault 'idempotency_cache_miss': the NEXT idempotency lookup of a push commit of (partition, client_id) is treated as unreadable, so that commit answers as SPEC §6.3 prescribes for an unreadable stored result: PUSH_RESULT rejected, no commitSeq, one error record at opIndex 0 with sync.idempotency_cache_miss (retryable; HTTP status of the code 500 in the catalogue, the round itself answers 200), nothing applied and nothing persisted, so the client keeps the commit queued and its retry applies it (or replays it). One-shot: consumed by that lookup when the round's transaction commits; arming it again before then is a no-op. Errors: sync.invalid_request (22023) NULL or empty argument, unknown fault. docs/testing-seams.md.$$;
