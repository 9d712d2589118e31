COMMENT ON FUNCTION syncular.realtime_connect(text, text, text) IS
'Realtime connect (SPEC §8.1, §8.7; docs/realtime.md §1): the hello data and the registration of one WebSocket. '
'Call at upgrade and again when a socket round with a PULL_HEADER completes. partition: the authenticated tenant; '
'actor_id: the authenticated actor; client_id: the socket''s clientId. Loads the subscriptions the client''s most recent '
'successful pull persisted, resolves the grant once (the scope resolver) and computes each subscription''s effective '
'scopes as a pull does (revoked ones are left out). Returns {actorId, clientId, cursor (the client record''s cursor, -1 '
'without a record), latestCursor (the partition''s max commit_seq), requiresSync (no record, nothing persisted, a '
'persisted subscription revoked now, or cursor < latestCursor), logEpoch, schemaVersion, wireVersion (the record''s, 3 '
'without one), scopeKeys (sorted distinct "prefix:value" keys: the presence grant, §8.6.3), registration (opaque: pass '
'it back to realtime_fanout)}. Writes nothing but the registry row of a partition never seen (as a round does). '
'Errors: sync.invalid_request (22023: NULL or empty argument), sync.invalid_client_id (22023: reserved '
'["remote-command", prefix or bound to another actor), sync.schema_not_ready (55000: no schema registered), '
'sync.invalid_subscription (22023: the resolver returned an undeclared variable). A failing resolver revokes every '
'subscription (fail closed) and does not raise. SECURITY DEFINER like syncular.handle.';
