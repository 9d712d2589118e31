COMMENT ON VIEW syncular.client_lag IS
  'Read-only. One row per client record: wire_version and cursor of its last round, commits_behind = the '
  'partition''s newest commit_seq - cursor (NULL while the client has no cursor, cursor < 0; counts every commit of the '
  'partition, an upper bound), behind_horizon (its next pull resets with sync.cursor_expired), last_seen_at_ms (ms '
  'since the epoch) and idle_ms (syncular.now_ms() - last_seen_at_ms). SPEC §4.5. docs/operations.md.';
