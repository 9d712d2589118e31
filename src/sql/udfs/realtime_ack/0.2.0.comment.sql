COMMENT ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) IS
'Realtime ack (SPEC §8.2; docs/realtime.md §3): {"type":"ack","cursor":n} of a socket. partition, actor_id, '
'client_id: the socket''s; cursor: n (a commitSeq); log_epoch: the logEpoch of the socket''s registration. One UPDATE '
'of the existing client record: cursor = GREATEST(cursor, n) and updated_at_ms = GREATEST(updated_at_ms, now in epoch '
'ms), only when the record belongs to actor_id, log_epoch is the partition''s current epoch and n is not beyond the '
'partition''s max commit_seq; subscriptions, actor and wire version are never written and a missing record is never '
'created. Returns true when the record was updated, false otherwise. Errors: sync.invalid_request (22023: NULL or '
'empty argument, cursor < 0 or > 2^53-1). SECURITY DEFINER like syncular.handle.';
