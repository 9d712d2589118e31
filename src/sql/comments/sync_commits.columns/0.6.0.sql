COMMENT ON COLUMN syncular.sync_commits.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_commits.commit_seq IS 'Commit sequence number within the partition (SPEC §2.2).';
COMMENT ON COLUMN syncular.sync_commits.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_commits.client_commit_id IS 'clientCommitId of the pushed commit (idempotency key within the client).';
COMMENT ON COLUMN syncular.sync_commits.actor_id IS 'Authenticated actor the gateway or caller passed to the round.';
COMMENT ON COLUMN syncular.sync_commits.created_at_ms IS 'When the commit was applied, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_commits.writer_version IS 'RFC 0007 writer version of the commit (writer fence); NULL for commits before fencing.';
COMMENT ON COLUMN syncular.sync_commits.result IS 'Stored PUSH_RESULT of a pushed commit (replayed for a retransmitted clientCommitId, SPEC §6.3); NULL for a commit of SQL writes, or dropped by syncular.prune (pushResultsOlderThanMs).';
