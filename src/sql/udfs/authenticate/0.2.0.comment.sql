COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered with syncular.set_authenticator for one request (SPEC §1.1). method, path: '
'the HTTP request line; headers, query: JSON objects of strings (NULL means {}). Returns {"actorId", "partition"} '
'(only those two keys) or NULL when the authenticator refuses or none is registered. Errors: sync.internal_error '
'(XX000) when the authenticator answers anything else than NULL or an object with non-empty string actorId and '
'partition; whatever the authenticator raises. syncular-gateway calls it once at each realtime WebSocket '
'upgrade (SPEC §8.1). SECURITY DEFINER: the authenticator runs as the extension owner.';
