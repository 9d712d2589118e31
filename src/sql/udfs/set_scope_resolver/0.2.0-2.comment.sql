COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (SPEC §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
