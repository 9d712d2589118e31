-- syncular install script, part 90: privileges.
--
-- Model (decided here; DESIGN.md "SQL surface"):
--   * The catalog tables are never writable by app roles (00_catalog revokes them from PUBLIC).
--   * The serving surface (handle, handle_http, push, pull, readiness, ...) is SECURITY DEFINER
--     with a fixed search_path, so a role that may EXECUTE it acts on the catalog only through the
--     protocol, never through raw table writes.  The sync procedure cannot be (PostgreSQL forbids
--     COMMIT in a SECURITY DEFINER procedure): it runs with the caller's rights, so grant it only
--     to a role that owns or may write the catalog.
--   * Nothing is executable by PUBLIC by default: serving as an arbitrary actor of an arbitrary
--     partition is a privilege the operator hands out explicitly.  Schema USAGE is public so that
--     granted roles can name the functions.
--   * Schema registration (ensure_schema), hook registration (set_*), maintenance (prune,
--     rotate_log_epoch), the barrier API and every internal `_` helper stay owner-only
--     (the extension owner, normally a superuser).  The views are owner-only until granted.
--
-- Operators grant what each role needs, for example:
--
--   -- a stateless gateway role: serve rounds
--   GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO sync_gateway;
--   -- ... and its remote operations route (docs/operations-protocol.md)
--   GRANT EXECUTE ON FUNCTION syncular.operations_http(bytea, text, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.operations_watch_rerun(text, jsonb) TO sync_gateway;
--   -- ... and its realtime sockets (docs/realtime.md; the fanout trusts the registrations it is given)
--   GRANT EXECUTE ON FUNCTION syncular.realtime_connect(text, text, text)               TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[])
--                                                                                         TO sync_gateway;
--   -- (gateways before 0.7.0 call the jsonb signature instead)
--   GRANT EXECUTE ON FUNCTION syncular.realtime_fanout(text, bigint, jsonb)             TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text)     TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.realtime_ack_many(text, text[], text[], bigint[], text[])
--                                                                                         TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.presence_authorize(text, text, text, text[])     TO sync_gateway;
--   -- ... and its commit wake-ups (docs/realtime.md "Commit wake-ups")
--   GRANT EXECUTE ON FUNCTION syncular.commit_wakeup_mode(), syncular.wait_commits(bigint, integer)
--                                                                                         TO sync_gateway;
--   -- ... its health route and, without a JWT key, SQL authentication (docs/gateway.md)
--   GRANT EXECUTE ON FUNCTION syncular.readiness(jsonb)                                  TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb)            TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text)
--                                                                                         TO sync_gateway;
--   -- ... and its blob routes (docs/blobs.md)
--   GRANT EXECUTE ON FUNCTION syncular.blob_upload_begin(text, text, text, bigint),
--                             syncular.blob_upload_append(bigint, bytea),
--                             syncular.blob_upload_finish(bigint),
--                             syncular.blob_get(text, text, text, text),
--                             syncular.blob_upload_grant(text, text, text, bigint),
--                             syncular.blob_url_upload_begin(text, text, bigint),
--                             syncular.blob_url_get(text, text) TO sync_gateway;
--   -- ... and its segment route (docs/segments.md)
--   GRANT EXECUTE ON FUNCTION syncular.segment_download(text, text, text, jsonb, text, text, text),
--                             syncular.segment_url_download(text, text, text, text) TO sync_gateway;
--
--   -- backend jobs writing synced data from SQL
--   GRANT EXECUTE ON FUNCTION syncular.push(text, text, text, jsonb) TO app_jobs;
--   GRANT EXECUTE ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) TO app_jobs;
--
--   -- a monitoring role
--   GRANT SELECT ON syncular.partitions, syncular.clients, syncular.commits, syncular.reactions
--     TO monitoring;
--
-- (README "Security" carries the same statements; the doc check runs them.)
--
-- Settings: every syncular.* GUC (operation caps, request limits, checkpoint declarations) is
-- PGC_SUSET; EXECUTE on the surface gives no right to change them.  A superuser grants one with
-- GRANT SET ON PARAMETER syncular.checkpoints TO sync_gateway, or stores a value for a role with
-- ALTER ROLE sync_gateway SET syncular.checkpoints = '[...]' (README "Security").
--
-- Hooks (scope resolver, validators) run inside the SECURITY DEFINER round as the extension
-- owner; write them with a fixed search_path like any definer-called code.

GRANT USAGE ON SCHEMA syncular TO PUBLIC;

-- Functions are executable by PUBLIC on creation; take that back for every routine of the
-- extension (functions and procedures), then let the operator grant per role as above.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;

-- Explicitly owner-only, whatever is granted in bulk later (documentation by statement).
REVOKE EXECUTE ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.unregister_schema(text, boolean) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.set_scope_resolver(regprocedure) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.prune(text, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.rotate_log_epoch(text) FROM PUBLIC;
REVOKE ALL ON syncular.partitions, syncular.clients, syncular.commits FROM PUBLIC;
REVOKE ALL ON syncular.push_results FROM PUBLIC;
REVOKE ALL ON syncular.changes FROM PUBLIC;

-- Remote operations (65_operations.sql): registration owner-only; the serving entry point is
-- granted to the gateway role like handle_http (docs/gateway.md).
REVOKE EXECUTE ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, regprocedure, integer),
                           syncular.register_queries(jsonb, integer, jsonb),
                           syncular.register_command(text, regprocedure, regprocedure),
                           syncular.operations_http(bytea, text, text, text),
                           syncular.operations_watch_rerun(text, jsonb),
                           syncular.operation_get_row(text, text) FROM PUBLIC;
