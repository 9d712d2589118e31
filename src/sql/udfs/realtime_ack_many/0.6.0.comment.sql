COMMENT ON FUNCTION syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) IS
'Realtime acks of many sockets of one partition in one statement (SPEC §8.2; docs/realtime.md §3): what a gateway '
'writes every --ack-flush-ms instead of one realtime_ack call per socket. partition: the sockets'' partition; element '
'i of actor_ids, client_ids, cursors (commitSeqs) and log_epochs (the logEpoch of the socket''s registration) is one '
'ack, the arguments of one realtime_ack call. Per client the highest ack that realtime_ack would record counts: the '
'record must exist and belong to that actor, the log epoch must be the partition''s current one and the cursor not '
'beyond the partition''s max commit_seq; then cursor = GREATEST(cursor, n) and updated_at_ms = GREATEST(updated_at_ms, '
'now in epoch ms), in ONE UPDATE for the whole batch. Acks that do not qualify (unknown client, another actor, an old '
'log epoch, a cursor beyond the log) are skipped; a lower cursor never moves a record back; subscriptions, actor and '
'wire version are never written and no record is created. Returns the number of client records updated. Errors '
'(nothing is written): sync.invalid_request (22023: NULL or empty partition, a NULL array, a multi-dimensional array, '
'arrays of different lengths (details: each length), a NULL or empty element (details {argument, index}), a cursor < 0 '
'or > 2^53-1 (details {index, cursor})). SECURITY DEFINER like syncular.handle.';
