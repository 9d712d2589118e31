COMMENT ON VIEW syncular.partitions IS
  'Read-only. One row per known partition (counter row and/or registry row): max_commit_seq, horizon_seq (0 when the partition never pushed), log_epoch and last_authenticated_at_ms (NULL when unregistered), clients = number of client records. SPEC §4.6.';
