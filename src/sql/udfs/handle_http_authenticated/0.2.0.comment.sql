COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication (SPEC §1.1) in one transaction: runs syncular.authenticate(method, path, '
'headers, query), then syncular.handle_http(request, partition, actorId, request_content_type) with its answer. Returns '
'what the HTTP endpoint answers: NULL from the authenticator (or none registered) gives 401 with a '
'sync.auth_required JSON body; an error raised by the authenticator gives 500 sync.internal_error with a fixed '
'message (the text goes to the server log); otherwise exactly what syncular.handle_http returns. Query '
'cancellation is re-raised. SECURITY DEFINER like syncular.handle_http; used by syncular-gateway.';
