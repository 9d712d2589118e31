COMMENT ON FUNCTION syncular.set_authenticator(regprocedure) IS
'Registers the request authenticator in the router database (SPEC §1.1 host authentication), or unregisters it when '
'fn is NULL. Not routed: the authenticator answers the partition, so it runs in the router before a shard is chosen; '
'it is a function of the router database (method text, path text, headers jsonb, query jsonb) RETURNS jsonb answering '
'{"actorId": text, "partition": text} or NULL, as for syncular.set_authenticator in the syncular extension. Stored '
'in syncular.router_settings.authenticator. Owner-only. Errors: sync.storage.hook_signature (SQLSTATE 22023; DETAIL '
'{"code": "sync.storage.hook_signature", "details": {hook, function, expected}}) for any other signature, a procedure, '
'an aggregate, a set-returning or variadic function. docs/scaling.md.';
