COMMENT ON VIEW syncular.partition_lag IS
  'Read-only. One row per known partition: newest_commit_seq (max_commit_seq) and its created_at_ms, clients, '
  'clients_without_cursor (cursor < 0: no pull served yet, or only revoked subscriptions), oldest_client_cursor (the lowest cursor >= 0 of its client records, NULL when '
  'none), max_commits_behind = newest_commit_seq - oldest_client_cursor (commit sequence numbers of the whole '
  'partition, an upper bound of what that client has still to pull), last_seen_at_ms (newest client record update, '
  'ms since the epoch). SPEC §4.5, §4.6. docs/operations.md.';
