-- syncular 0.2.0 -> 0.3.0 (ALTER EXTENSION syncular UPDATE TO '0.3.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.3.0'" to load this file. \quit

-- 56_wakeup: commit wake-ups (src/wakeup.c)
CREATE FUNCTION syncular.commit_wakeup_mode() RETURNS text
LANGUAGE C VOLATILE PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_commit_wakeup_mode';

COMMENT ON FUNCTION syncular.commit_wakeup_mode() IS
'How applied push commits of this session wake realtime gateways (SPEC §8.2; docs/realtime.md "Commit wake-ups"): '
'''notify'' (NOTIFY syncular_commit only), ''ring'' (the shared-memory ring read by syncular.wait_commits only) or '
'''both''. The setting syncular.commit_wakeup resolved against the preload: auto is ring with syncular in '
'shared_preload_libraries and notify without; ring and both are notify without the preload. A gateway asks it on '
'each database connection it takes wake-ups from. No arguments; never raises. Grant EXECUTE to the gateway role.';

CREATE FUNCTION syncular.wait_commits(after bigint, timeout_ms integer)
RETURNS TABLE(kind text, "position" bigint, partition text, commit_seq bigint)
LANGUAGE C VOLATILE PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'syncular_wait_commits';

COMMENT ON FUNCTION syncular.wait_commits(bigint, integer) IS
'Commit wake-ups of the current database from the shared-memory ring (SPEC §8.2, §8.3; docs/realtime.md '
'"Commit wake-ups"). after: the position returned by the previous call (NULL: start at the current head, '
'returns at once); timeout_ms: how long to sleep while there is nothing after `after` (0: do not sleep). '
'Rows kind = ''commit'' (position, partition, commit_seq: a commit that became visible; consecutive ones of '
'one partition collapse into the last, at most 1000 per call), then exactly one final row with partition and '
'commit_seq NULL: ''head'' (caught up; position = the current head), ''more'' (row limit reached: call again '
'at once) or ''lost'' (wake-ups after `after` were overwritten - the ring holds 4096 wake-ups and 512 kB of '
'partition names for the whole cluster -, `after` is from an earlier server run, or a partition was longer than '
'64 kB: resynchronize every partition, then continue). The final row''s position is the next call''s `after`. '
'Only commits pushed with the ring mode (syncular.commit_wakeup_mode() ring or both) are recorded. '
'The sleep ends on pg_cancel_backend and statement_timeout (SQLSTATE 57014). Errors: '
'sync.storage.wakeup_unavailable (55000: the library is not in shared_preload_libraries; HINT says what to do), '
'sync.invalid_request (22023: timeout_ms NULL or negative). Grant EXECUTE to the gateway role only.';

-- 30_engine: handles COMMENT names the commit wake-up modes (src/wakeup.c)
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

-- A role that runs realtime_fanout is a gateway role: it gets the two wake-up functions too, so
-- a gateway keeps receiving wake-ups when commit_wakeup resolves to the ring after the update.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT DISTINCT a.grantee::regrole AS role
             FROM pg_catalog.pg_proc p, LATERAL pg_catalog.aclexplode(p.proacl) a
            WHERE p.oid = 'syncular.realtime_fanout(text,bigint,jsonb)'::pg_catalog.regprocedure
              AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> p.proowner
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION syncular.commit_wakeup_mode(), '
                              'syncular.wait_commits(bigint, integer) TO %s', r.role);
  END LOOP;
END $$;

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
