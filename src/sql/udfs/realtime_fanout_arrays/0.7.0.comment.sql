COMMENT ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]) IS
'Realtime fanout with the connections as three arrays (SPEC §8.2, §8.3; docs/realtime.md §2): what '
'syncular.realtime_fanout(partition, commit_seq, connections jsonb) answers for the connections '
'{conn: conn_ids[i], cursor: cursors[i], registration: registrations[i]}, row for row and byte for byte; '
'syncular-gateway calls this one. registrations[i]: the registration object realtime_connect answered, as JSON '
'text. A backend keeps the parse of each registration text (per compiled schema, within '
'syncular.realtime_registration_cache_kb), so a gateway passing the same text every commit has it parsed once. '
'Errors: those of realtime_fanout (details index counted from 0; a registration that is not a JSON object is '
'field registration, a NULL element field conn, cursor or registration), and sync.invalid_request (22023) when '
'an argument is NULL, an array has more than one dimension or the arrays differ in length. The registrations '
'are trusted input: grant EXECUTE only to the gateway role. SECURITY DEFINER like syncular.handle.';
