-- ---------------------------------------------------------------------------------------------
-- What each catalog table holds (psql \dt+ syncular.*).  Writers are the engine and the SQL
-- surface; app roles never write them (90_grants.sql).
COMMENT ON TABLE syncular.sync_partitions IS
'One row per partition (tenant) that was written: horizon_seq = the pruning horizon (SPEC §4.6: a cursor below it resets). The newest commit_seq is the newest sync_commits row''s, or the horizon (view syncular.partitions). Writers take the partition lock (syncular._partition_lock, docs/storage.md) and RowExclusiveLock on this table; ensure_schema and unregister_schema take LOCK TABLE IN EXCLUSIVE MODE.';
