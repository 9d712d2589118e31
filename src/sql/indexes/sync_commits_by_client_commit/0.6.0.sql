CREATE UNIQUE INDEX sync_commits_by_client_commit ON syncular.sync_commits (partition, client_id, client_commit_id)
  WHERE result IS NOT NULL;
