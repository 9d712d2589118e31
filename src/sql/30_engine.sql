-- syncular install script, part 30: the engine's SQL entry points (src/sql_api.c).

CREATE FUNCTION syncular.handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle';
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits wake '
'realtime gateways when the transaction commits, never on rollback (syncular.commit_wakeup_mode(): NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, or the ring of syncular.wait_commits). '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response; a commit whose row is over syncular.max_row_bytes or whose rowId, scope value or '
'index key is over its maximum is a durable rejection (sync.invalid_request, reason row_too_large / key_too_large), '
'and pull sections stop at syncular.max_response_bytes with a resume token or their last delivered commit '
'(docs/limits.md). Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments; a request over syncular.max_request_bytes, checked before '
'decoding, details {maxRequestBytes, requestBytes}; more than syncular.max_subscriptions_per_request '
'subscriptions, details {maxSubscriptions, subscriptions}; a partition, clientId or clientCommitId over 256 bytes, '
'details {field, maxBytes, bytes}), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered; a round with pushes on a hot standby, details {"hotStandby": true}, where pull-only rounds are '
'served and write nothing), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';

CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle_http';
COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'POST /sync as one row (SPEC §1.1): runs syncular.handle in a subtransaction and returns exactly what the '
'HTTP endpoint answers. Success: 200, application/vnd.syncular.sync.v2, the SSP2 response. A content_type whose '
'part before '';'' is not application/vnd.syncular.sync.v2: 415 with a sync.invalid_request JSON body. A catalogue '
'error raised by the round: its catalogue HTTP status (SPEC §10) and the JSON body {code, category, retryable, '
'recommendedAction, message, details?}, nothing written. Any other error: 500 sync.internal_error with a fixed '
'message (the database text goes to the server log only). Query cancellation is re-raised. SECURITY DEFINER like '
'syncular.handle.';

CREATE PROCEDURE syncular.sync(request bytea, partition text, actor_id text,
                               INOUT response bytea DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'syncular_sync';
COMMENT ON PROCEDURE syncular.sync(bytea, text, text, bytea) IS
'The procedure form of syncular.handle (same arguments, errors and response in `response`). Called outside a '
'transaction block it commits after every pushed commit, releasing the partition lock between commits as the '
'reference server does, and serves the pull in a final transaction; inside a transaction block it behaves like '
'syncular.handle. Runs with the caller''s rights (PostgreSQL forbids transaction control in SECURITY DEFINER '
'procedures): the calling role needs the privileges on the syncular catalog tables and the synced tables that '
'handle otherwise holds as its owner.';
