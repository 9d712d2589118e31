COMMENT ON COLUMN syncular.sync_push_results.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_push_results.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_push_results.client_commit_id IS 'clientCommitId of the pushed commit (idempotency key within the client).';
COMMENT ON COLUMN syncular.sync_push_results.result IS 'Stored PUSH_RESULT of the commit (replayed for a retransmitted clientCommitId).';
