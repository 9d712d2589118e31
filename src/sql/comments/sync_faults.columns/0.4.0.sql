COMMENT ON COLUMN syncular.sync_faults.fault IS 'Armed fault, e.g. idempotency_cache_miss (syncular.inject_fault; a superuser-only test seam).';
COMMENT ON COLUMN syncular.sync_faults.partition IS 'Partition the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.client_id IS 'clientId the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.armed_at_ms IS 'When the fault was armed, milliseconds since the Unix epoch.';
