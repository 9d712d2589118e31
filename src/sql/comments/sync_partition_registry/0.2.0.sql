COMMENT ON TABLE syncular.sync_partition_registry IS
'The log epoch of each partition (SPEC §2.1): a client whose logEpoch differs is told to reset. Written on first use of a partition and by syncular.rotate_log_epoch; last_authenticated_at_ms = the last authenticated round, to within a second (a round rewrites it only when it is at least 1 s old).';
