-- syncular_router install script, part 00: the shard map, routing hash and error mapping.
--
-- The router database holds no sync data.  Its schema "syncular" has the serving surface of the
-- syncular extension with the same names and argument lists; each function runs on the shard
-- databases through PL/Proxy (CLUSTER 'syncular'), whose shard map is the SQL/MED server
-- "syncular" (options p0 .. pN-1, a power of two; docs/scaling.md).
--
-- Conventions:
--   * syncular._r_* are the PL/Proxy functions (one remote call each); the public functions are
--     plpgsql wrappers that call them and map PL/Proxy's errors (syncular._route_error).
--   * A partition-keyed call runs on logical shard hashtext(partition) & (N - 1), PL/Proxy's own
--     mapping; a NULL partition is sent to the shard of '' so that the shard refuses it as it
--     refuses it when called directly.
--   * The wrappers are SECURITY INVOKER: PL/Proxy connects to the shards with the user mapping
--     of the calling role, so the shard's own grants (its 90_grants.sql) decide what may run.

\echo Use "CREATE EXTENSION syncular_router" to load this file. \quit

--#include udfs/shard_hash/0.2.0.sql
--#include udfs/shard_hash/0.2.0.comment.sql

--#include udfs/shard_count/0.2.0.sql
--#include udfs/shard_count/0.2.0.comment.sql

--#include udfs/shard_of/0.2.0.sql
--#include udfs/shard_of/0.2.0.comment.sql

--#include udfs/shard_connstr/0.2.0.sql
--#include udfs/shard_connstr/0.2.0.comment.sql

--#include udfs/_unavailable_body/0.2.0.sql
--#include udfs/_unavailable_body/0.2.0.comment.sql

--#include udfs/_shard_failed/0.2.0.sql
--#include udfs/_shard_failed/0.2.0.comment.sql

--#include udfs/_route_error/0.2.0.sql
--#include udfs/_route_error/0.2.0.comment.sql
-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.

--#include types/sync_reactions/0.2.0.sql
--#include comments/sync_reactions/0.2.0.sql

--#include udfs/_r_handle/0.2.0.sql
--#include udfs/_r_handle/0.2.0.comment.sql

--#include udfs/handle/0.2.0.sql
--#include udfs/handle/0.2.0.comment.sql

--#include udfs/_r_handle_http/0.2.0.sql
--#include udfs/_r_handle_http/0.2.0.comment.sql

--#include udfs/_handle_http/0.2.0.sql
--#include udfs/_handle_http/0.2.0.comment.sql

--#include udfs/handle_http/0.2.0.sql
--#include udfs/handle_http/0.2.0.comment.sql

--#include udfs/_r_push/0.2.0.sql
--#include udfs/push/0.2.0.sql
--#include udfs/_r_push/0.2.0.comment.sql
--#include udfs/push/0.2.0.comment.sql

--#include udfs/_r_pull/0.2.0.sql
--#include udfs/pull/0.2.0.sql
--#include udfs/_r_pull/0.2.0.comment.sql
--#include udfs/pull/0.2.0.comment.sql

--#include udfs/_r_serve_gate/0.2.0.sql
--#include udfs/serve_gate/0.2.0.sql
--#include udfs/_r_serve_gate/0.2.0.comment.sql
--#include udfs/serve_gate/0.2.0.comment.sql

--#include udfs/_r_declare_checkpoint/0.2.0.sql
--#include udfs/declare_checkpoint/0.2.0.sql
--#include udfs/_r_declare_checkpoint/0.2.0.comment.sql
--#include udfs/declare_checkpoint/0.2.0.comment.sql

--#include udfs/_r_claim_checkpoint/0.2.0.sql
--#include udfs/claim_checkpoint/0.2.0.sql
--#include udfs/_r_claim_checkpoint/0.2.0.comment.sql
--#include udfs/claim_checkpoint/0.2.0.comment.sql

--#include udfs/_r_advance_checkpoint/0.2.0.sql
--#include udfs/advance_checkpoint/0.2.0.sql
--#include udfs/_r_advance_checkpoint/0.2.0.comment.sql
--#include udfs/advance_checkpoint/0.2.0.comment.sql

--#include udfs/_r_activate_checkpoint/0.2.0.sql
--#include udfs/activate_checkpoint/0.2.0.sql
--#include udfs/_r_activate_checkpoint/0.2.0.comment.sql
--#include udfs/activate_checkpoint/0.2.0.comment.sql

--#include udfs/_r_checkpoints/0.2.0.sql
--#include udfs/checkpoints/0.2.0.sql
--#include udfs/_r_checkpoints/0.2.0.comment.sql
--#include udfs/checkpoints/0.2.0.comment.sql

--#include udfs/_r_source_coverage_seq/0.2.0.sql
--#include udfs/source_coverage_seq/0.2.0.sql
--#include udfs/_r_source_coverage_seq/0.2.0.comment.sql
--#include udfs/source_coverage_seq/0.2.0.comment.sql

--#include udfs/_r_prune/0.2.0.sql
--#include udfs/prune/0.2.0.sql
--#include udfs/_r_prune/0.2.0.comment.sql
--#include udfs/prune/0.2.0.comment.sql

--#include udfs/_r_rotate_log_epoch/0.2.0.sql
--#include udfs/rotate_log_epoch/0.2.0.sql
--#include udfs/_r_rotate_log_epoch/0.2.0.comment.sql
--#include udfs/rotate_log_epoch/0.2.0.comment.sql

--#include udfs/_r_claim_reactions/0.2.0.sql
--#include udfs/claim_reactions/0.2.0.sql
--#include udfs/_r_claim_reactions/0.2.0.comment.sql
--#include udfs/claim_reactions/0.2.0.comment.sql

--#include udfs/_r_renew_reaction_lease/0.2.0.sql
--#include udfs/renew_reaction_lease/0.2.0.sql
--#include udfs/_r_renew_reaction_lease/0.2.0.comment.sql
--#include udfs/renew_reaction_lease/0.2.0.comment.sql

--#include udfs/_r_complete_reaction/0.2.0.sql
--#include udfs/complete_reaction/0.2.0.sql
--#include udfs/_r_complete_reaction/0.2.0.comment.sql
--#include udfs/complete_reaction/0.2.0.comment.sql

--#include udfs/_r_fail_reaction/0.2.0.sql
--#include udfs/fail_reaction/0.2.0.sql
--#include udfs/_r_fail_reaction/0.2.0.comment.sql
--#include udfs/fail_reaction/0.2.0.comment.sql

--#include udfs/_r_retry_dead_letter_reaction/0.2.0.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.sql
--#include udfs/_r_retry_dead_letter_reaction/0.2.0.comment.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.comment.sql

--#include udfs/_r_prune_reactions/0.2.0.sql
--#include udfs/prune_reactions/0.2.0.sql
--#include udfs/_r_prune_reactions/0.2.0.comment.sql
--#include udfs/prune_reactions/0.2.0.comment.sql

-- syncular_router install script, part 20: cluster-wide calls (every shard).
--
-- PL/Proxy runs a RUN ON ALL query on every shard in parallel, each in its own transaction, and
-- raises when any shard fails; there is no two-phase commit.  A call that changes the shards
-- (schema and hook registration) is therefore made in two rounds through the shard function
-- syncular.cluster_call: a check round (every shard runs the call and rolls it back) and, only
-- when every shard passed it, the apply round.  A shard that refuses, or that cannot be reached,
-- fails the check round and nothing is applied anywhere.  A shard lost between the two rounds
-- leaves the call applied on the others; these calls are idempotent, so the operator re-runs it.

--#include udfs/_r_cluster_call/0.2.0.sql
--#include udfs/_r_cluster_call/0.2.0.comment.sql

--#include udfs/_cluster/0.2.0.sql
--#include udfs/_cluster/0.2.0.comment.sql

--#include udfs/_shard_database/0.2.0.sql
--#include udfs/_shard_database/0.2.0.comment.sql

--#include udfs/_tag_checkpoints/0.2.0.sql
--#include udfs/_tag_checkpoints/0.2.0.comment.sql

--#include udfs/ensure_schema/0.2.0.sql
--#include udfs/ensure_schema/0.2.0.comment.sql

--#include udfs/set_scope_resolver/0.2.0.sql
--#include udfs/set_scope_resolver/0.2.0.comment.sql

--#include udfs/set_row_validator/0.2.0.sql
--#include udfs/set_row_validator/0.2.0.comment.sql

--#include udfs/set_commit_validator/0.2.0.sql
--#include udfs/set_commit_validator/0.2.0.comment.sql

--#include udfs/set_reaction_planner/0.2.0.sql
--#include udfs/set_reaction_planner/0.2.0.comment.sql

--#include udfs/_r_readiness/0.2.0.sql
--#include udfs/_r_readiness/0.2.0.comment.sql

--#include udfs/readiness/0.2.0.sql
--#include udfs/readiness/0.2.0.comment.sql
-- syncular_router install script, part 30: the surface syncular-gateway uses (docs/gateway.md,
-- docs/scaling.md "The gateway in front of the router").
--
--   * realtime_connect, realtime_fanout, realtime_ack and presence_authorize are routed to the
--     shard of their partition like the round functions (part 10);
--   * the SQL authenticator lives in the router database itself: it answers which partition a
--     request belongs to, so it runs before any shard is chosen.  set_authenticator registers it
--     here (table syncular.router_settings), authenticate runs it here, and
--     handle_http_authenticated runs it and then the routed handle_http (SPEC §1.1);
--   * shard_conninfos lists the distinct shard databases, so that the gateway LISTENs on every
--     one of them (NOTIFY syncular_commit is issued by the shard that commits, SPEC §8.2).

--#include udfs/_r_realtime_connect/0.2.0.sql
--#include udfs/_r_realtime_connect/0.2.0.comment.sql

--#include udfs/realtime_connect/0.2.0.sql
--#include udfs/realtime_connect/0.2.0.comment.sql

--#include udfs/_r_realtime_fanout/0.2.0.sql
--#include udfs/_r_realtime_fanout/0.2.0.comment.sql

--#include udfs/realtime_fanout/0.2.0.sql
--#include udfs/realtime_fanout/0.2.0.comment.sql

--#include udfs/_r_realtime_ack/0.2.0.sql
--#include udfs/_r_realtime_ack/0.2.0.comment.sql

--#include udfs/realtime_ack/0.2.0.sql
--#include udfs/realtime_ack/0.2.0.comment.sql

--#include udfs/_r_presence_authorize/0.2.0.sql
--#include udfs/_r_presence_authorize/0.2.0.comment.sql

--#include udfs/presence_authorize/0.2.0.sql
--#include udfs/presence_authorize/0.2.0.comment.sql

-- ---------------------------------------------------------------- the shard databases to LISTEN on

--#include udfs/shard_conninfos/0.2.0.sql
--#include udfs/shard_conninfos/0.2.0.comment.sql

-- ---------------------------------------------------------------- the SQL authenticator (SPEC §1.1)

--#include tables/router_settings/0.2.0.sql
--#include comments/router_settings/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.router_settings', '');

--#include udfs/set_authenticator/0.2.0.sql
--#include udfs/set_authenticator/0.2.0.comment.sql

--#include udfs/authenticate/0.2.0.sql
--#include udfs/authenticate/0.2.0.comment.sql

--#include udfs/_auth_error_body/0.2.0.sql
--#include udfs/_auth_error_body/0.2.0.comment.sql

--#include udfs/_handle_http_authenticated/0.2.0.sql
--#include udfs/_handle_http_authenticated/0.2.0.comment.sql

--#include udfs/handle_http_authenticated/0.2.0.sql
--#include udfs/handle_http_authenticated/0.2.0.comment.sql
-- syncular_router install script, part 90: privileges.
--
-- The same model as the syncular extension's 90_grants.sql: nothing is executable by PUBLIC; the
-- public functions are SECURITY DEFINER with a fixed search_path, so PL/Proxy reaches the shards
-- with the user mapping of the extension owner, and the router's grants decide who may serve
-- which call.  Operators grant per role, for example:
--
--   GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text)            TO sync_gateway;
--
-- Cluster-wide calls (ensure_schema, set_*), maintenance and the barrier stay owner-only.

--#include grants/syncular/0.2.0.sql
