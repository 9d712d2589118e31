COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication through the router (SPEC §1.1): runs the router''s syncular.authenticate, '
'then the routed syncular.handle_http(request, partition, actorId, request_content_type) on the shard of the answered '
'partition. NULL from the authenticator (or none registered) gives 401 sync.auth_required; an error raised by the '
'authenticator gives 500 sync.internal_error with a fixed message (the text goes to the router''s server log); '
'otherwise what the routed handle_http answers (503 {"shardUnavailable": true} for a shard PL/Proxy cannot reach). '
'The authenticator runs in the router''s transaction, the round in its own transaction on the shard. Query '
'cancellation is re-raised. docs/scaling.md.';
