COMMENT ON VIEW syncular.push_results IS
  'Read-only. Every stored idempotency record (SPEC §2.3, §6.3), one per pushed (partition, client, clientCommitId): the result of an applied commit still in the log (sync_commits.result) and those of sync_push_results (rejected commits, and applied commits pruned from the log).';
