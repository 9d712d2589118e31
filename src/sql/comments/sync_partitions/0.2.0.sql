-- ---------------------------------------------------------------------------------------------
-- What each catalog table holds (psql \dt+ syncular.*).  Writers are the engine and the SQL
-- surface; app roles never write them (90_grants.sql).
COMMENT ON TABLE syncular.sync_partitions IS
'One row per partition (tenant): max_commit_seq = the last commit sequence appended, horizon_seq = the pruning horizon (SPEC §4.6: a cursor below it resets). Every push locks its row FOR UPDATE; ensure_schema and unregister_schema take LOCK TABLE IN EXCLUSIVE MODE.';
