-- No silent divergence: a re-opening ensure_schema (same version) refuses while a synced table
-- lacks its capture triggers or has them disabled, and says what to do about the rows written
-- meanwhile.
CREATE FUNCTION syncular._check_capture(compiled jsonb) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t       jsonb;
  app     text := compiled ->> 'appSchema';
  missing text[];
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') LOOP
    SELECT array_agg(n ORDER BY n) INTO missing
      FROM unnest(ARRAY['zz_syncular_capture', 'syncular_capture_insert', 'syncular_capture_update',
                        'syncular_capture_delete', 'syncular_capture_truncate']) AS n
     WHERE NOT EXISTS (SELECT 1 FROM pg_trigger g
                        WHERE g.tgrelid = format('%I.%I', app, t ->> 'name')::regclass
                          AND g.tgname = n AND g.tgenabled IN ('O', 'A'));
    IF missing IS NOT NULL THEN
      PERFORM syncular._raise('sync.storage.physical_layout_mismatch',
        'a synced table lacks its capture triggers (dropped or disabled)',
        jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                           'reason', 'capture_triggers_missing', 'triggers', to_jsonb(missing)),
        format('Rows written to %I.%I while they were missing never reached clients. Restore them '
               '(ALTER TABLE %I.%I ENABLE TRIGGER ALL, or SELECT syncular._install_capture(%L, %L) as '
               'the extension owner), then SELECT syncular.rotate_log_epoch(partition) for every '
               'partition written meanwhile, so its clients bootstrap again.',
               app, t ->> 'name', app, t ->> 'name', app, t ->> 'name'));
    END IF;
  END LOOP;
END
$$;
