COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'Routed: POST /sync as one row, the shard''s syncular.handle_http on the shard of partition (the same status, '
'content type and body). A shard PL/Proxy cannot reach answers 503 application/json {"code": "sync.schema_not_ready", '
'"category": "internal", "retryable": true, "recommendedAction": "retryLater", "message": "server schema is not '
'ready for this request", "details": {"shardUnavailable": true}} (the client retries later, as for a closed serve '
'gate); the PL/Proxy message goes to the server log. Query cancellation is re-raised. docs/scaling.md, '
'wire-format.md §9.';
