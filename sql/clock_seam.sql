-- clock_seam: every timestamp and deadline the engine writes or compares reads one clock
-- (src/clock.c): syncular.now_ms() in SQL, sync_now_ms() in C.  The superuser-only settings
-- syncular.clock_override_ms (pin) and syncular.clock_offset_ms (shift) move it: commit
-- created_at_ms, push result recordedAtMs, client updated_at_ms, lease issued/expires and
-- revocation, segment publication expiry and prune_segments' default now, signed segment URL
-- urlExpiresAtMs and its verification (and a TTL of 0: issued already expired), prune's default
-- now, reactions' default now, checkpoints, client_lag.  (Signed blob URLs: blob_urls.sql.)
\i sql/pull_fixture.psql

-- 1. the setting: pin, shift, refuse junk, superuser only
SET LOCAL syncular.clock_override_ms = '1700000000123';
SELECT syncular.now_ms() AS pinned, syncular._reaction_now(NULL) AS reactions_clock;
SET LOCAL syncular.clock_offset_ms = '5000';
SELECT syncular.now_ms() AS pin_wins_over_offset;
SET LOCAL syncular.clock_override_ms = '';
SELECT syncular.now_ms() - (extract(epoch FROM clock_timestamp()) * 1000)::bigint BETWEEN 4000 AND 6000 AS shifted_5s;
SET LOCAL syncular.clock_offset_ms = '-86400000';
SELECT syncular.now_ms() - (extract(epoch FROM clock_timestamp()) * 1000)::bigint BETWEEN -86401000 AND -86399000 AS a_day_back;
SET LOCAL syncular.clock_offset_ms = '';
SELECT abs(syncular.now_ms() - (extract(epoch FROM clock_timestamp()) * 1000)::bigint) < 1000 AS wall_clock;
SAVEPOINT junk;
SET LOCAL syncular.clock_override_ms = 'soon';
ROLLBACK TO SAVEPOINT junk;
SET LOCAL syncular.clock_override_ms = '-1';
ROLLBACK TO SAVEPOINT junk;
SET LOCAL syncular.clock_override_ms = '9007199254740992';
ROLLBACK TO SAVEPOINT junk;
SET LOCAL syncular.clock_offset_ms = '1e3';
ROLLBACK TO SAVEPOINT junk;
SELECT context, vartype FROM pg_settings WHERE name IN ('syncular.clock_override_ms', 'syncular.clock_offset_ms');
CREATE ROLE regress_clock_app;
GRANT EXECUTE ON FUNCTION syncular.now_ms() TO regress_clock_app;
SAVEPOINT as_app;
SET LOCAL ROLE regress_clock_app;
SET LOCAL syncular.clock_override_ms = '0';
ROLLBACK TO SAVEPOINT as_app;
SET LOCAL ROLE regress_clock_app;
SELECT syncular.now_ms() > 1700000000000 AS app_role_reads_the_clock;
RESET ROLE;

-- 2. commits, idempotency records, client records
SET LOCAL syncular.clock_override_ms = '1700000000123';
SELECT pg_temp.push('[{"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "a", "list_id": "L1", "title": "one"}},
   {"table": "todos", "row": {"id": "x", "list_id": "L2", "title": null}}]}]');
SELECT commit_seq, created_at_ms FROM syncular.sync_commits;
SELECT result ->> 'recordedAtMs' AS recorded_at_ms FROM syncular.push_results;
SELECT client_id, updated_at_ms FROM syncular.sync_clients;
SET LOCAL syncular.clock_override_ms = '1700000060123';
SELECT client_id, last_seen_at_ms, idle_ms FROM syncular.client_lag;

-- 3. segments: publication expiry, pruning by the clock; signed URL expiry and verification
SET LOCAL syncular.segment_url_base = 'https://cdn.example/segments/';
SET LOCAL syncular.segment_url_ttl = '10min';
CREATE FUNCTION pg_temp.refs(client text) RETURNS TABLE (id text, url text, exp_ms bigint) LANGUAGE sql AS $$
SELECT f->>'segmentId', f->>'url', (f->>'urlExpiresAtMs')::bigint
  FROM jsonb_array_elements(syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('p1', 'admin', client)),
      '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 10}'::jsonb,
      '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}'::jsonb))),
    'p1', 'admin'))->'frames') f
 WHERE f->>'type' = 'SEGMENT_REF'
$$;
SELECT id AS seg, split_part(url, '?st=', 2) AS st, exp_ms FROM pg_temp.refs('c-url') \gset
SELECT :exp_ms AS url_expires_at_ms, :exp_ms = 1700000060000 + 600000 AS issuing_second_plus_ttl;
SELECT created_at_ms, expires_at_ms FROM syncular.sync_segment_publications;
CREATE FUNCTION pg_temp.fetch(seg text, st text) RETURNS text LANGUAGE sql AS $$
  SELECT status || coalesce(' ' || (convert_from(body, 'UTF8')::jsonb ->> 'code'), '')
    FROM syncular.segment_url_download(seg, st) WHERE status <> 200
  UNION ALL SELECT '200' FROM syncular.segment_url_download(seg, st) WHERE status = 200 LIMIT 1
$$;
-- verified on the same clock: valid through exp + 60 s (§5.4 skew), expired after
SET LOCAL syncular.clock_override_ms = '1700000720000';
SELECT pg_temp.fetch(:'seg', :'st') AS at_exp_plus_60s;
SET LOCAL syncular.clock_override_ms = '1700000721000';
SELECT pg_temp.fetch(:'seg', :'st') AS at_exp_plus_61s;
-- TTL 0: issued already expired (urlExpiresAtMs is the issuing second, before now)
SET LOCAL syncular.clock_override_ms = '1700000060123';
SET LOCAL syncular.segment_url_ttl = 0;
SELECT exp_ms AS ttl0_expires_at_ms, exp_ms <= syncular.now_ms() AS already_expired FROM pg_temp.refs('c-url0');
-- the publication expires with the clock: a download past it answers segment_expired, and
-- prune_segments() (no argument: now) forgets it
SET LOCAL syncular.clock_override_ms = '1700086460122';
SELECT status, CASE WHEN status <> 200 THEN convert_from(body, 'UTF8')::jsonb ->> 'code' END AS code
  FROM syncular.segment_download(:'seg', 'p1', 'admin', '{"list_id": ["L2"]}');
SET LOCAL syncular.clock_override_ms = '1700086460123';
SELECT status, CASE WHEN status <> 200 THEN convert_from(body, 'UTF8')::jsonb ->> 'code' END AS code
  FROM syncular.segment_download(:'seg', 'p1', 'admin', '{"list_id": ["L2"]}');
SELECT syncular.prune_segments() AS pruned;

-- 4. leases: issued at now, expire at now + ttl, revoked at now; an outage round is refused
--    once the clock passes the expiry
CREATE TABLE public.mode (m text);
INSERT INTO public.mode VALUES ('ok');
CREATE OR REPLACE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT CASE WHEN (SELECT m FROM public.mode) = 'outage' THEN '"outage"'::jsonb
              ELSE '{"list_id": "*", "owner_id": "*"}'::jsonb END
$$;
SET LOCAL syncular.lease_ttl_ms = 600000;
SET LOCAL syncular.clock_override_ms = '1700000000123';
CREATE FUNCTION pg_temp.lease_round() RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  SELECT * INTO r FROM syncular.handle_http(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c-lease', 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('p1', 'admin', 'c-lease')),
      '{"type": "PULL_HEADER", "limitCommits": 10, "limitSnapshotRows": 10, "maxSnapshotPages": 1, "accept": 1}'::jsonb,
      '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}'::jsonb))),
    'p1', 'admin', 'application/vnd.syncular.sync.v2');
  IF r.content_type = 'application/json' THEN
    RETURN r.status || ' ' || (convert_from(r.body, 'UTF8')::jsonb ->> 'code');
  END IF;
  RETURN r.status || ' ' || coalesce((SELECT (f ->> 'expiresAtMs') FROM jsonb_array_elements(
      syncular.debug_render(r.body) -> 'frames') f WHERE f ->> 'type' = 'LEASE'), 'no LEASE');
END $$;
SELECT pg_temp.lease_round() AS lease_frame_expires_at_ms;
SELECT issued_at_ms, expires_at_ms FROM syncular.sync_leases;
UPDATE public.mode SET m = 'outage';
SET LOCAL syncular.clock_override_ms = '1700000600122';
SELECT pg_temp.lease_round() AS outage_1ms_before_expiry;
SET LOCAL syncular.clock_override_ms = '1700000600123';
SELECT pg_temp.lease_round() AS outage_at_expiry;
UPDATE public.mode SET m = 'ok';
SELECT pg_temp.lease_round() AS slid_to;
SELECT syncular.revoke_leases('p1', 'admin') AS revoked;
SELECT revoked_at_ms FROM syncular.sync_leases;

-- 5. prune's default now: the active window is measured on the clock (writer and c-url were
--    seen at ...0123 / ...60123; 15 days later nobody is active and the horizon moves)
SET LOCAL syncular.clock_override_ms = '1701296000123';
SELECT syncular.prune('p1', '{"minRetainedCommits": 0}') ->> 'horizonSeq' AS horizon_15_days_later;

-- 6. checkpoints are stamped with the clock
SELECT syncular.declare_checkpoint('p1', 'cp', 2) ->> 'updatedAtMs' AS checkpoint_updated_at_ms;

ROLLBACK;
