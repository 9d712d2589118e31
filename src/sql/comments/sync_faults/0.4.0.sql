COMMENT ON TABLE syncular.sync_faults IS
'Test fault seams armed by syncular.inject_fault (superuser only): per (partition, client id, fault) one armed fault, consumed (deleted) by the first engine lookup it matches, in that lookup''s transaction. Faults: idempotency_cache_miss. Emptied by unregister_schema; not dumped. docs/testing-seams.md.';
