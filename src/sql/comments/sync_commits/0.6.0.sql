COMMENT ON TABLE syncular.sync_commits IS
'The commit log (SPEC §2.1): one row per applied commit, (partition, commit_seq) with the client, clientCommitId, actor and time; writer_version is the RFC 0007 writer fence value (trigger sync_commits_writer_fence); result is a pushed commit''s stored result (its idempotency record, found by sync_commits_by_client_commit). Pruned by syncular.prune.';
