-- syncular install script, part 55: realtime (src/realtime.c, src/fanout.c; docs/realtime.md).
-- The extension side of SPEC §8: a stateless gateway holds the WebSockets and calls these.

CREATE FUNCTION syncular.realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_connect';

CREATE FUNCTION syncular.realtime_fanout(partition text, commit_seq bigint, connections jsonb)
RETURNS TABLE(conn bigint, action text, reason text, body bytea, next_cursor bigint)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_fanout';

CREATE FUNCTION syncular.realtime_ack(partition text, actor_id text, client_id text, cursor bigint,
                                      log_epoch text)
RETURNS boolean LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_ack';

CREATE FUNCTION syncular.presence_authorize(partition text, actor_id text, client_id text,
                                            scope_keys text[])
RETURNS text[] LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_presence_authorize';

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

COMMENT ON FUNCTION syncular.realtime_fanout(text, bigint, jsonb) IS
'Realtime fanout (SPEC §8.2, §8.3; docs/realtime.md §2): ONE call per commit notification per gateway. partition: '
'the notified partition; commit_seq: the notified commitSeq; connections: JSON array of {conn: integer id of the '
'socket (echoed), cursor: the socket''s delivered cursor, registration: from realtime_connect}. Reads the partition '
'state, the serve gate and the commit window once in the statement''s snapshot and matches the window against every '
'registration in memory. Returns one row per element, in input order: action ''delta'' (body = a complete SSP2 '
'response in the registration''s wire version: RESP_HEADER, then per subscription with matching changes SUB_START / '
'COMMIT(s) / SUB_END with nextCursor = next_cursor, END; covers (cursor, min(commit_seq, max commit_seq)] '
'cursor-contiguously), ''wake'' with reason ''reset-required'' (log epoch rotated, schema version changed, schema '
'refusal of the serve gate, cursor behind the pruning horizon), ''catchup-required'' (cursor < 0, window longer than '
'syncular.realtime_max_window_commits commits or past the syncular.realtime_max_window_changes changes read, a '
'pending backfill checkpoint, or the live grant - the scope resolver, once per (actor, client) per call, or reused '
'within syncular.realtime_grant_cache_ms - no longer gives the registered effective scopes) or '
'''delta-too-large'' (over syncular.realtime_max_delta_bytes); next_cursor = the input cursor for wakes; ''none'' when '
'nothing in the window matches (next_cursor = window end) or the notification is not new (next_cursor = cursor). '
'Errors: sync.invalid_request (22023: NULL argument, empty partition, connections not an array, a malformed element '
'or registration, a registration of another partition; details {index, field}), sync.schema_not_ready (55000: no '
'schema registered). The registration is trusted input: grant EXECUTE only to the gateway role. SECURITY DEFINER '
'like syncular.handle.';

COMMENT ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) IS
'Realtime ack (SPEC §8.2; docs/realtime.md §3): {"type":"ack","cursor":n} of a socket. partition, actor_id, '
'client_id: the socket''s; cursor: n (a commitSeq); log_epoch: the logEpoch of the socket''s registration. One UPDATE '
'of the existing client record: cursor = GREATEST(cursor, n) and updated_at_ms = GREATEST(updated_at_ms, now in epoch '
'ms), only when the record belongs to actor_id, log_epoch is the partition''s current epoch and n is not beyond the '
'partition''s max commit_seq; subscriptions, actor and wire version are never written and a missing record is never '
'created. Returns true when the record was updated, false otherwise. Errors: sync.invalid_request (22023: NULL or '
'empty argument, cursor < 0 or > 2^53-1). SECURITY DEFINER like syncular.handle.';

COMMENT ON FUNCTION syncular.presence_authorize(text, text, text, text[]) IS
'Presence authorization (SPEC §8.6.3; docs/realtime.md §4): the subset of scope_keys ("prefix:value", input order, '
'NULLs and duplicates dropped) the client is registered on under its current grant, i.e. in the scopeKeys '
'realtime_connect would return now. Arguments and errors as realtime_connect, plus sync.invalid_request (22023) for '
'a NULL or multi-dimensional scope_keys. SECURITY DEFINER like syncular.handle.';
