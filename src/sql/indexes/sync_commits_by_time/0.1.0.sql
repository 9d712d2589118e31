CREATE INDEX sync_commits_by_time ON syncular.sync_commits (partition, created_at_ms);
