-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit

-- Reads never exceed the grant; a failing resolver is logged (comment only).
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (DESIGN.md decision 7; data-model-and-storage.md §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;

-- debug_render renders U+0000 and lone surrogates (comment only).
COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';

-- Realtime (SPEC §8): the functions a gateway calls for hello, fanout, acks and presence.
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

-- handle documents the request limits (comment only).
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6, push-and-pull.md §2) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, delivered at commit. '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response; a commit whose row is over syncular.max_row_bytes or whose rowId, scope value or '
'index key is over its maximum is a durable rejection (sync.invalid_request, reason row_too_large / key_too_large), '
'and pull sections stop at syncular.max_response_bytes with a resume token or their last delivered commit '
'(docs/settings.md). Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments; a request over syncular.max_request_bytes, checked before '
'decoding, details {maxRequestBytes, requestBytes}; more than syncular.max_subscriptions_per_request '
'subscriptions, details {maxSubscriptions, subscriptions}; a partition, clientId or clientCommitId over 256 bytes, '
'details {field, maxBytes, bytes}), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
