COMMENT ON FUNCTION syncular.operations_http(bytea, text, text, text) IS
'Routed: POST <mount>/operations as one row (REMOTE.md revision 1 §5), the shard''s syncular.operations_http on the '
'shard of partition (the same status, content type and body; a command commits on the shard when the call ends). '
'A shard PL/Proxy cannot reach answers 503 application/json with the sync.schema_not_ready body of '
'syncular.handle_http (details {"shardUnavailable": true}); the PL/Proxy message goes to the server log. Query '
'cancellation is re-raised. docs/operations-protocol.md, docs/scaling.md.';
