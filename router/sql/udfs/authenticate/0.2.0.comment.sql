COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered in the router with syncular.set_authenticator for one request (SPEC §1.1), in the '
'router database. Arguments, result and errors as syncular.authenticate of the syncular extension: '
'{"actorId", "partition"} or NULL; sync.internal_error (XX000) for any other answer; whatever the authenticator '
'raises. syncular-gateway calls it once at each realtime WebSocket upgrade. docs/scaling.md.';
