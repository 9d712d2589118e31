-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- syncular._raise with an errhint; schema registration errors say what to do;
-- syncular.unregister_schema (src/sql/05_errors.sql, 10_schema.sql, 12_unregister.sql).
--#include udfs/_raise-4/0.2.0.sql
--#include udfs/_raise-4/0.2.0.comment.sql

--#include udfs/_schema_change_hint/0.2.0.sql
--#include udfs/_schema_change_hint/0.2.0.comment.sql

--#include-or-replace udfs/_verify_stored_layouts/0.2.0.sql
--#include udfs/_verify_stored_layouts/0.1.0.comment.sql

--#include-or-replace udfs/_ensure_schema/0.2.0.sql
--#include udfs/_ensure_schema/0.1.0.comment.sql

--#include udfs/unregister_schema/0.2.0.sql
--#include udfs/unregister_schema/0.2.0.comment.sql

--#include udfs/ensure_schema/0.2.0.comment.sql

REVOKE EXECUTE ON FUNCTION syncular._raise(text, text, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular._schema_change_hint() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.unregister_schema(text, boolean) FROM PUBLIC;

--#include comments/sync_partitions/0.2.0.sql
COMMENT ON TABLE syncular.sync_partition_registry IS
'The log epoch of each partition (SPEC §2.1): a client whose logEpoch differs is told to reset. Written on first use of a partition and by syncular.rotate_log_epoch; last_authenticated_at_ms = the last authenticated round.';
--#include comments/sync_row_scopes/0.2.0.sql
--#include comments/sync_commits/0.2.0.sql
--#include comments/sync_changes/0.2.0.sql
--#include comments/sync_change_scopes/0.2.0.sql
--#include comments/sync_push_results/0.2.0.sql
--#include comments/sync_reactions/0.2.0.sql
COMMENT ON TABLE syncular.sync_clients IS
'Client records (SPEC §4.5): per (partition, client id) the bound actor, wire version, last cursor, subscriptions and time of the last round. A client id bound to another actor is refused. View: syncular.clients.';
COMMENT ON TABLE syncular.sync_blob_refs IS
'The blob ids referenced by blob_ref values of current rows (SPEC §5.9.4), per (partition, table, row id). Indexed only: this server has no blob store.';
--#include comments/sync_tombstones/0.2.0.sql
--#include comments/sync_backfill_checkpoints/0.2.0.sql
--#include comments/sync_writer_fence/0.2.0.sql
--#include comments/sync_schema_meta/0.2.0.sql
--#include comments/sync_settings/0.2.0.sql
--#include comments/sync_row_validators/0.2.0.sql

-- ---------------------------------------------------------------------------------------------
-- COMMENTs of the public surface cite public SPEC sections.
--#include udfs/error_catalog/0.2.0.comment.sql
--#include udfs/ensure_schema/0.2.0-2.comment.sql
--#include udfs/set_scope_resolver/0.2.0.comment.sql
--#include udfs/set_row_validator/0.2.0.comment.sql
--#include udfs/set_commit_validator/0.2.0.comment.sql
--#include udfs/set_reaction_planner/0.2.0.comment.sql
--#include udfs/handle/0.2.0.comment.sql
--#include udfs/handle_http/0.2.0.comment.sql
--#include udfs/prune/0.2.0.comment.sql
--#include udfs/rotate_log_epoch/0.2.0.comment.sql
--#include comments/partitions/0.2.0.sql
--#include comments/clients/0.2.0.sql
--#include comments/commits/0.2.0.sql
--#include udfs/claim_reactions/0.2.0.comment.sql
--#include udfs/renew_reaction_lease/0.2.0.comment.sql
--#include udfs/complete_reaction/0.2.0.comment.sql
--#include udfs/fail_reaction/0.2.0.comment.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.comment.sql
--#include udfs/prune_reactions/0.2.0.comment.sql
COMMENT ON VIEW syncular.reactions IS
  'Read-only. The durable reactions (SPEC §6.9; sync_reactions) with key = the planner''s record key (element 3 of the idempotency key) and due = claimable now by the wall clock (pending and available, or leased with an expired lease). Times in epoch ms; for a dead-letter row available_at_ms is the time it was dead-lettered. Owner-only until granted.';
--#include udfs/syncular_writer_fence/0.2.0.comment.sql

-- COMMENTs merged from main (scope read rule, debug_render escapes).
--#include udfs/set_scope_resolver/0.2.0-2.comment.sql
--#include udfs/debug_render/0.2.0.comment.sql

-- Realtime (SPEC §8): the functions a gateway calls for hello, fanout, acks and presence.
-- syncular install script, part 55: realtime (src/realtime.c, src/fanout.c; docs/realtime.md).
-- The extension side of SPEC §8: a stateless gateway holds the WebSockets and calls these.

--#include udfs/realtime_connect/0.2.0.sql

--#include udfs/realtime_fanout/0.2.0.sql

--#include udfs/realtime_ack/0.2.0.sql

--#include udfs/presence_authorize/0.2.0.sql

--#include udfs/realtime_connect/0.2.0.comment.sql

--#include udfs/realtime_fanout/0.2.0.comment.sql

--#include udfs/realtime_ack/0.2.0.comment.sql

--#include udfs/presence_authorize/0.2.0.comment.sql

-- Cluster-wide calls through the syncular_router extension (src/sql/80_cluster.sql).
-- syncular install script, part 80: the shard side of cluster-wide calls.
--
-- A sharded deployment (docs/scaling.md: the syncular_router extension and PL/Proxy) runs
-- schema registration and hook registration on every shard.  PL/Proxy runs each remote call in
-- its own transaction, with no two-phase commit, so "fail as a whole" is built in two rounds:
-- first every shard checks the call (runs it and rolls it back), then, only when every shard
-- accepted, every shard applies it.  cluster_call is the one shard entry point for both rounds.

--#include udfs/_cluster_dispatch/0.2.0.sql
--#include udfs/_cluster_dispatch/0.2.0.comment.sql

--#include udfs/cluster_call/0.2.0.sql
--#include udfs/cluster_call/0.2.0.comment.sql

--#include udfs/handle/0.2.0-2.comment.sql

-- The gateway's SQL authentication (src/sql/22_authenticator.sql).
-- syncular install script, part 22: host authentication in SQL (SPEC §1.1: "the host's
-- authenticate(request) runs on every HTTP request and WebSocket upgrade; its result supplies
-- actorId and the partition").  syncular-gateway uses it when it is not given a JWT key: the
-- registered function sees the request's method, path, headers and query and answers who is
-- calling, inside the same transaction as the round it authorizes.

ALTER TABLE syncular.sync_settings ADD COLUMN authenticator REGPROCEDURE;

--#include udfs/set_authenticator/0.2.0.sql
--#include udfs/set_authenticator/0.2.0.comment.sql

--#include udfs/authenticate/0.2.0.sql
--#include udfs/authenticate/0.2.0.comment.sql

--#include udfs/handle_http_authenticated/0.2.0.sql
--#include udfs/handle_http_authenticated/0.2.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- CRDT columns (SPEC §5.10): the merger registry, syncular.crdt_merge, and ensure_schema's
-- crdtType rule (yjs-doc or a registered type).  Same text as src/sql/26_crdt.sql and
-- syncular._compile_schema in src/sql/10_schema.sql.

--#include tables/sync_crdt_mergers/0.2.0.sql
--#include comments/sync_crdt_mergers/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_crdt_mergers', '');
REVOKE ALL ON syncular.sync_crdt_mergers FROM PUBLIC;

--#include udfs/_crdt_type_known/0.2.0.sql
--#include udfs/_crdt_type_known/0.2.0.comment.sql

--#include udfs/set_crdt_merger/0.2.0.sql
--#include udfs/set_crdt_merger/0.2.0.comment.sql

--#include udfs/crdt_merge/0.2.0.sql
--#include udfs/crdt_merge/0.2.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular._crdt_type_known(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.set_crdt_merger(text, regprocedure) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.crdt_merge(text, bytea, bytea) FROM PUBLIC;

--#include-or-replace udfs/_compile_schema/0.2.0.sql

-- 0.2.0: the blob store (58_blobs.sql)
--#include comments/sync_blob_refs/0.2.0.sql

-- syncular install script, part 58: the blob store (SPEC §5.9; src/blobs.c; docs/blobs.md).

--#include sequences/sync_blob_upload_seq/0.2.0.sql

--#include tables/sync_blobs/0.2.0.sql
--#include indexes/sync_blobs_gc/0.2.0.sql

--#include tables/sync_blob_chunks/0.2.0.sql
-- out of line and never compressed: blobs are mostly compressed media, and a chunk is read whole
ALTER TABLE syncular.sync_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

--#include config_dump/sync_blobs/0.2.0.sql
REVOKE ALL ON syncular.sync_blobs, syncular.sync_blob_chunks, syncular.sync_blob_upload_seq FROM PUBLIC;

--#include comments/sync_blobs/0.2.0.sql
--#include comments/sync_blob_chunks/0.2.0.sql

--#include udfs/blob_upload_begin/0.2.0.sql

--#include udfs/blob_upload_append/0.2.0.sql

--#include udfs/blob_upload_finish/0.2.0.sql

--#include udfs/put_blob/0.2.0.sql

--#include udfs/blob_get/0.2.0.sql

--#include udfs/blob_gc/0.2.0.sql

--#include udfs/blob_upload_begin/0.2.0.comment.sql
--#include udfs/blob_upload_append/0.2.0.comment.sql
--#include udfs/blob_upload_finish/0.2.0.comment.sql
--#include udfs/put_blob/0.2.0.comment.sql
--#include udfs/blob_get/0.2.0.comment.sql
--#include udfs/blob_gc/0.2.0.comment.sql

-- 0.2.0: auth leases (59_leases.sql)
-- syncular install script, part 59: auth leases (SPEC §7.3; src/leases.c; README "Auth leases").

--#include tables/sync_leases/0.2.0.sql
--#include indexes/sync_leases_by_actor/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_leases', '');
REVOKE ALL ON syncular.sync_leases FROM PUBLIC;
COMMENT ON TABLE syncular.sync_leases IS
'Auth leases (SPEC §7.3.1): per (partition, client id) the leaseId, the actor, the allowed scopes the resolver returned at issuance and issued/expires (epoch ms); revoked_at_ms once revoked. Issued and slid by rounds while syncular.lease_ttl_ms > 0; read when the resolver signals an outage; revoked by revoke_lease / revoke_leases, deleted by clear_lease and unregister_schema.';

--#include udfs/revoke_lease/0.2.0.sql

--#include udfs/revoke_leases/0.2.0.sql

--#include udfs/clear_lease/0.2.0.sql

--#include udfs/revoke_lease/0.2.0.comment.sql
--#include udfs/revoke_leases/0.2.0.comment.sql
--#include udfs/clear_lease/0.2.0.comment.sql
-- 45_stats: activity statistics (src/stats.c) and lag views.
--
-- The counters live in shared memory: they are collected only when the library is in
-- shared_preload_libraries.  Conventions of pg_stat_statements: superuser or pg_read_all_stats
-- reads them, the owner resets them.  docs/operations.md says what every figure means.

--#include udfs/_stats/0.2.0.sql
--#include udfs/_stats/0.2.0.comment.sql

--#include udfs/_stats_tables/0.2.0.sql
--#include udfs/_stats_tables/0.2.0.comment.sql

--#include udfs/stats_reset/0.2.0.sql
--#include udfs/stats_reset/0.2.0.comment.sql

--#include views/stats/0.2.0.sql
--#include comments/stats/0.2.0.sql

--#include views/stats_tables/0.2.0.sql
--#include comments/stats_tables/0.2.0.sql

--#include views/partition_lag/0.2.0.sql
--#include comments/partition_lag/0.2.0.sql

--#include views/client_lag/0.2.0.sql
COMMENT ON VIEW syncular.client_lag IS
  'Read-only. One row per client record: wire_version and cursor of its last round, commits_behind = the '
  'partition''s newest commit_seq - cursor (NULL while the client has no cursor, cursor < 0; counts every commit of the '
  'partition, an upper bound), behind_horizon (its next pull resets with sync.cursor_expired), last_seen_at_ms (ms '
  'since the epoch) and idle_ms (now() - last_seen_at_ms). SPEC §4.5. docs/operations.md.';

--#include grants/stats/0.2.0.sql
-- The segment store and direct download (src/sql/45_segments.sql, SPEC §5).
--
-- Segments are cache, not durable state (§5.1: "servers MAY expire them at any time"), so both
-- tables are UNLOGGED: building a segment writes no WAL, and after a crash PostgreSQL truncates
-- them.  A descriptor issued before the crash then answers 404 sync.not_found, which §5.5 makes
-- legal ("the expired→forgotten transition"), and the client's recovery is a re-pull.  Unlogged
-- tables are not replicated and cannot be read on a hot standby: a standby serves the rows lane
-- inline only (docs/segments.md).  The bytes column is STORAGE EXTERNAL: out of line without
-- pglz, which would spend CPU on every build for a payload the serving hop compresses per
-- response (§5.8) anyway.

--#include tables/sync_segments/0.2.0.sql
ALTER TABLE syncular.sync_segments ALTER COLUMN bytes SET STORAGE EXTERNAL;
--#include comments/sync_segments/0.2.0.sql

--#include tables/sync_segment_publications/0.2.0.sql
--#include indexes/sync_segment_publications_segment/0.2.0.sql
--#include indexes/sync_segment_publications_expiry/0.2.0.sql
--#include comments/sync_segment_publications/0.2.0.sql

--#include udfs/prune_segments/0.2.0.sql
--#include udfs/prune_segments/0.2.0.comment.sql

--#include udfs/segment_download/0.2.0.sql
--#include udfs/segment_download/0.2.0.comment.sql

--#include udfs/segments/0.2.0.sql
--#include udfs/segments/0.2.0.comment.sql

--#include tables/sync_segment_secret/0.2.0.sql
--#include rows/sync_segment_secret/0.2.0.sql
--#include grants/sync_segments/0.2.0.sql
--#include comments/sync_segment_secret/0.2.0.sql

--#include udfs/segment_url_download/0.2.0.sql
--#include udfs/segment_url_download/0.2.0.comment.sql
-- Advisory timestamps are rewritten at most once a second (src/storage.h SYNC_TOUCH_INTERVAL_MS).
--#include comments/sync_partition_registry/0.2.0.sql
--#include comments/sync_clients/0.2.0.sql

-- The serve gate in C (src/gate.c): the same signatures, the rule's one definition.
--#include-or-replace udfs/serve_gate/0.2.0.sql
--#include-or-replace udfs/_serve_gate_check/0.2.0.sql
--#include udfs/_serve_gate_check/0.2.0.comment.sql

-- syncular install script, part 58b: signed blob URLs — presigned upload grants (SPEC §5.9.3)
-- and presigned downloads (§5.9.5), the native token of §5.4 (src/blobs.c, src/segurl.c;
-- docs/blobs.md).

--#include indexes/sync_blobs_blob_id/0.2.0.sql

--#include udfs/blob_upload_grant/0.2.0.sql

--#include udfs/blob_url_upload_begin/0.2.0.sql

--#include udfs/blob_url_get/0.2.0.sql

--#include udfs/blob_upload_grant/0.2.0.comment.sql
--#include udfs/blob_url_upload_begin/0.2.0.comment.sql
--#include udfs/blob_url_get/0.2.0.comment.sql
--#include udfs/blob_get/0.2.0-2.comment.sql

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
