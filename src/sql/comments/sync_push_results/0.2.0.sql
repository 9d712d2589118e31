COMMENT ON TABLE syncular.sync_push_results IS
'Idempotency records (SPEC §2.3, §6.3): the outcome of each pushed (client, clientCommitId), applied or rejected, replayed unchanged to a retry. Kept by default; syncular.prune drops them only when asked (pushResultsOlderThanMs).';
