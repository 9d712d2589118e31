-- reactions: durable reactions (push-and-pull.md §2.8, §6.9): syncular._enqueue_reactions
-- validation and storage, claim order and leasing, owner checks, exponential backoff, dead
-- letters, retry, bounded prune, the read view.  Time is pinned through the now_ms arguments.
-- pg_regress runs every test in one database: this one works in a private database so that
-- it neither sees nor leaves catalog rows.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_reactions;
\c syncular_t_reactions
\i sql/test_helpers.psql
\set VERBOSITY terse

-- enq(records): _enqueue_reactions for partition pv, client c1, commit cc-v, seq 7 at 1000 ms
CREATE FUNCTION pg_temp.enq(records text) RETURNS text LANGUAGE sql AS $$
  SELECT pg_temp.try(format('SELECT syncular._enqueue_reactions(%L, %L, %L, 7, %L::jsonb, 1000)',
                            'pv', 'c1', 'cc-v', records))
$$;
-- a valid record with key k and the given extra members
CREATE FUNCTION pg_temp.rec(k text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('key', k, 'type', 'email', 'version', 1, 'payload', jsonb_build_object('to', k)) || extra
$$;
CREATE VIEW pg_temp.rx AS
SELECT partition AS part, idempotency_key::jsonb ->> 3 AS key, status, attempts, max_attempts AS max,
       created_at_ms AS created, available_at_ms AS available, lease_owner AS owner,
       lease_expires_at_ms AS lease_exp, completed_at_ms AS completed, last_failure
  FROM syncular.sync_reactions ORDER BY partition, idempotency_key;

-- ---------------------------------------------------------------------------------------------
-- enqueue: refusals (each names the field); nothing below writes a row
SELECT pg_temp.enq('{"key": "k"}') AS not_array;
SELECT pg_temp.enq((SELECT jsonb_agg(pg_temp.rec('k' || i)) FROM generate_series(1, 101) i)::text) AS too_many;
SELECT pg_temp.enq('[1]') AS not_object;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', '{"max_attempts": 3}'))::text) AS unknown_member;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k') - 'key')::text) AS key_missing;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', '{"key": 5}'))::text) AS key_number;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', '{"key": null}'))::text) AS key_null;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec(''))::text) AS key_empty;
-- 'é' is 2 bytes: 128 of them are 256 bytes (fine, below), 129 are 258
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec(repeat('é', 129)))::text) AS key_258_bytes;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('a'), pg_temp.rec('b'), pg_temp.rec('a'))::text) AS key_duplicate;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k') - 'type')::text) AS type_missing;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', '{"type": ["email"]}'))::text) AS type_array;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', '{"type": ""}'))::text) AS type_empty;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('type', repeat('t', 129))))::text) AS type_129_bytes;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k') - 'version')::text) AS version_missing;
SELECT v AS version, pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('version', v::jsonb)))::text) AS result
  FROM unnest(ARRAY['0', '-1', '2147483648', '1.5', '"1"', 'null', 'true']) v;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k') - 'payload')::text) AS payload_missing;
-- size: compact JSON bytes.  {"k":"<s>"} is 8 + len(s) bytes compact (jsonb's text would be 9 +
-- len(s)): len 65528 is exactly 65,536 bytes (accepted below), 65529 is one too many
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('payload', jsonb_build_object('k', repeat('x', 65529)))))::text) AS payload_65537_bytes;
-- depth: 16 nested arrays are fine (below), 17 are not; objects count the same
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('payload', (repeat('[', 17) || repeat(']', 17))::jsonb)))::text) AS payload_17_arrays;
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('payload', (repeat('{"a":', 16) || '[]' || repeat('}', 16))::jsonb)))::text) AS payload_16_objects_and_an_array;
SELECT v AS max_attempts, pg_temp.enq(jsonb_build_array(pg_temp.rec('k', jsonb_build_object('maxAttempts', v::jsonb)))::text) AS result
  FROM unnest(ARRAY['0', '101', '2.5', '"3"']) v;
SELECT pg_temp.try($$SELECT syncular._enqueue_reactions(NULL, 'c', 'cc', 1, '[]')$$) AS partition_null,
       pg_temp.try($$SELECT syncular._enqueue_reactions('p', NULL, 'cc', 1, '[]')$$) AS client_null,
       pg_temp.try($$SELECT syncular._enqueue_reactions('p', 'c', NULL, 1, '[]')$$) AS commit_null,
       pg_temp.try($$SELECT syncular._enqueue_reactions('p', 'c', 'cc', NULL, '[]')$$) AS seq_null;
-- the index names the failing record
SELECT pg_temp.enq(jsonb_build_array(pg_temp.rec('a'), pg_temp.rec('b'), pg_temp.rec('c', '{"version": 0}'))::text) AS bad_third;
SELECT count(*) AS rows_after_refusals FROM syncular.sync_reactions;

-- enqueue: accepted shapes
SELECT pg_temp.enq(NULL) AS sql_null, pg_temp.enq('null') AS json_null, pg_temp.enq('[]') AS empty;
SELECT pg_temp.enq(jsonb_build_array(
  pg_temp.rec(repeat('é', 128)),                                                        -- key of 256 bytes
  pg_temp.rec('t128', jsonb_build_object('type', repeat('t', 128))),
  pg_temp.rec('v-max', '{"version": 2147483647, "maxAttempts": 100}'),
  pg_temp.rec('v-3.0', '{"version": 3.0, "maxAttempts": 1}'),
  pg_temp.rec('m-null', '{"maxAttempts": null}'),
  pg_temp.rec('big', jsonb_build_object('payload', jsonb_build_object('k', repeat('x', 65528)))),
  pg_temp.rec('deep', jsonb_build_object('payload', (repeat('[', 16) || repeat(']', 16))::jsonb)),
  pg_temp.rec('nullpay', '{"payload": null}'),
  pg_temp.rec('str', '{"payload": "just a string"}'))::text) AS inserted;
SELECT left(key, 8) AS key, octet_length(key) AS key_bytes, octet_length(type) AS type_bytes, version,
       max_attempts, octet_length(syncular._compact_json(payload)) AS payload_bytes,
       CASE WHEN key = 'big' THEN '(65528 x)' ELSE payload::text END AS payload
  FROM (SELECT idempotency_key::jsonb ->> 3 AS key, * FROM syncular.sync_reactions) r ORDER BY key;
-- every row: pending, attempts 0, created = available = now, source columns from the arguments
SELECT count(*) AS rows, bool_and(status = 'pending' AND attempts = 0 AND created_at_ms = 1000 AND available_at_ms = 1000
                                  AND source_client_id = 'c1' AND source_client_commit_id = 'cc-v' AND source_commit_seq = 7
                                  AND lease_owner IS NULL AND lease_expires_at_ms IS NULL AND completed_at_ms IS NULL
                                  AND last_failure IS NULL AND partition = 'pv') AS all_fresh
  FROM syncular.sync_reactions;
-- the idempotency key is compact JSON of [partition, clientId, clientCommitId, key] with JSON
-- string escaping (quote, backslash, control characters; non-ASCII kept)
SELECT syncular._enqueue_reactions(E'p"1', E'c\\1', E'cc\n1', 9,
         jsonb_build_array(pg_temp.rec(E'k\t\u0001é'))) AS inserted;
SELECT idempotency_key FROM syncular.sync_reactions WHERE source_commit_seq = 9;
-- enqueueing the same commit again keeps the existing rows (ON CONFLICT DO NOTHING)
UPDATE syncular.sync_reactions SET attempts = 4 WHERE source_commit_seq = 9;
SELECT syncular._enqueue_reactions(E'p"1', E'c\\1', E'cc\n1', 9,
         jsonb_build_array(pg_temp.rec(E'k\t\u0001é'), pg_temp.rec('new'))) AS inserted_again;
SELECT idempotency_key::jsonb ->> 3 AS key, attempts FROM syncular.sync_reactions WHERE source_commit_seq = 9 ORDER BY 1;
DELETE FROM syncular.sync_reactions;

-- ---------------------------------------------------------------------------------------------
-- claim: order (available_at_ms, created_at_ms, idempotency_key), due rows only, leases
SELECT syncular._enqueue_reactions('p1', 'c1', 'cc1', 1, jsonb_build_array(pg_temp.rec('b'), pg_temp.rec('a')), 1000) AS n1,
       syncular._enqueue_reactions('p1', 'c1', 'cc2', 2, jsonb_build_array(pg_temp.rec('c'), pg_temp.rec('d')), 2000) AS n2,
       syncular._enqueue_reactions('p1', 'c1', 'cc3', 3, jsonb_build_array(pg_temp.rec('e')), 2500) AS n3,
       syncular._enqueue_reactions('p2', 'c9', 'cc1', 1, jsonb_build_array(pg_temp.rec('a')), 500) AS n_other;
-- c becomes available first (500, though created at 2000); d and e share available_at 1000
-- with b and a, but were created later; e becomes available only at 5000
UPDATE syncular.sync_reactions SET available_at_ms = 500 WHERE partition = 'p1' AND idempotency_key LIKE '%"c"]';
UPDATE syncular.sync_reactions SET available_at_ms = 1000 WHERE partition = 'p1' AND idempotency_key LIKE '%"d"]';
UPDATE syncular.sync_reactions SET available_at_ms = 5000 WHERE partition = 'p1' AND idempotency_key LIKE '%"e"]';
SELECT idempotency_key, status, attempts, lease_owner, lease_expires_at_ms, available_at_ms, created_at_ms
  FROM syncular.claim_reactions('p1', 'w1', 2, 100, 3000);
SELECT idempotency_key, status, attempts, lease_owner, lease_expires_at_ms
  FROM syncular.claim_reactions('p1', 'w2', 10, 200, 3000);
-- nothing else is due at 3000 (c, a leased until 3100; b, d until 3200; e at 5000)
SELECT count(*) AS claimed_again FROM syncular.claim_reactions('p1', 'w3', 10, 100, 3000);
SELECT * FROM pg_temp.rx;
-- a lease ends at lease_expires_at_ms: at 3099 nothing, at 3100 c and a are reclaimed (attempts 2)
SELECT count(*) AS at_3099 FROM syncular.claim_reactions('p1', 'w3', 10, 100, 3099);
SELECT idempotency_key::jsonb ->> 3 AS key, attempts, lease_owner, lease_expires_at_ms
  FROM syncular.claim_reactions('p1', 'w3', 10, 5000, 3100);
-- at 5000: b and d (expired at 3200) and e (available at 5000), not c and a (leased until
-- 8100); limit 1 takes the first
SELECT idempotency_key::jsonb ->> 3 AS key, attempts, lease_owner FROM syncular.claim_reactions('p1', 'w4', 1, 1000, 5000);
SELECT idempotency_key::jsonb ->> 3 AS key, attempts, lease_owner FROM syncular.claim_reactions('p1', 'w4', 5, 1000, 5000);
-- the other partition was never touched
SELECT * FROM pg_temp.rx WHERE part = 'p2';
-- argument refusals
SELECT pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', 'w', 0)$$) AS limit_0,
       pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', 'w', 1001)$$) AS limit_1001;
SELECT pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', 'w', NULL)$$) AS limit_null;
SELECT pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', 'w', 10, 0)$$) AS lease_0;
SELECT pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', '', 10)$$) AS owner_empty,
       pg_temp.try($$SELECT count(*) FROM syncular.claim_reactions('p1', NULL, 10)$$) AS owner_null;
-- limit 1000 and lease 1 ms are allowed (nothing is due at 0)
SELECT count(*) AS limit_1000 FROM syncular.claim_reactions('p1', 'w', 1000, 1, 0);

-- ---------------------------------------------------------------------------------------------
-- owner checks: complete / renew / fail by anyone but the current lease holder change nothing
-- state: c, a leased by w3 until 8100 (attempts 2); b, d, e leased by w4 until 6000
SELECT syncular.complete_reaction('p1', '["p1","c1","cc2","c"]', 'w1', 4000) AS complete_by_old_owner,
       syncular.renew_reaction_lease('p1', '["p1","c1","cc2","c"]', 'w1', 100, 4000) AS renew_by_old_owner,
       syncular.fail_reaction('p1', '["p1","c1","cc2","c"]', 'w1', '{"error": "x"}', false, 1000, 300000, 4000) IS NULL AS fail_by_old_owner_is_null,
       syncular.complete_reaction('p1', '["p1","c1","cc2","c"]', NULL, 4000) AS complete_by_null,
       syncular.complete_reaction('p2', '["p1","c1","cc2","c"]', 'w3', 4000) AS complete_other_partition,
       syncular.complete_reaction('p1', '["p1","c1","cc2","zz"]', 'w3', 4000) AS complete_unknown;
SELECT * FROM pg_temp.rx WHERE key = 'c';
-- the holder renews (also after expiry, while nobody reclaimed it) and completes
SELECT syncular.renew_reaction_lease('p1', '["p1","c1","cc2","c"]', 'w3', 5000, 4000) AS renew_by_owner;
SELECT key, lease_exp FROM pg_temp.rx WHERE key = 'c';
SELECT syncular.renew_reaction_lease('p1', '["p1","c1","cc2","c"]', 'w3', 50, 9500) AS renew_after_expiry;
SELECT key, lease_exp FROM pg_temp.rx WHERE key = 'c';
SELECT pg_temp.try($$SELECT syncular.renew_reaction_lease('p1', '["p1","c1","cc2","c"]', 'w3', 0)$$) AS renew_lease_0;
SELECT syncular.complete_reaction('p1', '["p1","c1","cc2","c"]', 'w3', 9600) AS complete_by_owner;
SELECT * FROM pg_temp.rx WHERE key = 'c';
-- a completed row: complete, renew and fail all refuse; it is never claimed again
SELECT syncular.complete_reaction('p1', '["p1","c1","cc2","c"]', 'w3', 9700) AS complete_twice,
       syncular.renew_reaction_lease('p1', '["p1","c1","cc2","c"]', 'w3', 100, 9700) AS renew_completed,
       syncular.fail_reaction('p1', '["p1","c1","cc2","c"]', 'w3', '{}', false, 1000, 300000, 9700) IS NULL AS fail_completed_is_null;
-- at 20000 every other lease has expired: a, b, d, e are reclaimed, c is not
SELECT string_agg(idempotency_key::jsonb ->> 3, ',') AS reclaimed FROM syncular.claim_reactions('p1', 'w5', 10, 100, 20000);
-- the owner may not complete a pending row either (w5's fail put it back)
SELECT syncular.fail_reaction('p1', '["p1","c1","cc1","a"]', 'w5', '{"e": 1}', false, 1000, 300000, 20000) AS fail_a;
SELECT syncular.complete_reaction('p1', '["p1","c1","cc1","a"]', 'w5', 20001) AS complete_pending;
DELETE FROM syncular.sync_reactions;

-- ---------------------------------------------------------------------------------------------
-- backoff: pending again at now + min(base * 2^(attempts - 1), cap).  All three rows are claimed
-- with a long lease, so each later claim returns only the row a fail put back.
SELECT syncular._enqueue_reactions('pb', 'c', 'cc', 1,
  jsonb_build_array(pg_temp.rec('x'), pg_temp.rec('y'), pg_temp.rec('z', '{"maxAttempts": 100}')), 10000) AS n;
SELECT string_agg(idempotency_key::jsonb ->> 3, ',') AS claimed FROM syncular.claim_reactions('pb', 'w', 3, 1000000000, 10000);
-- y with base 100, cap 250: +100, +200, +250 (400 capped), then base 0: +0
SELECT syncular.fail_reaction('pb', '["pb","c","cc","y"]', 'w', '{"try": 1}', false, 100, 250, 10000) AS y_fail_1;
SELECT key, status, attempts, available, owner, lease_exp, last_failure FROM pg_temp.rx WHERE key = 'y';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10099 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10099);
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10100 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10100);
SELECT syncular.fail_reaction('pb', '["pb","c","cc","y"]', 'w', NULL, false, 100, 250, 10100) AS y_fail_2;
SELECT key, attempts, available, last_failure FROM pg_temp.rx WHERE key = 'y';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10299 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10299);
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10300 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10300);
SELECT syncular.fail_reaction('pb', '["pb","c","cc","y"]', 'w', NULL, false, 100, 250, 10300) AS y_fail_3;
SELECT key, attempts, available FROM pg_temp.rx WHERE key = 'y';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10550 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10550);
SELECT syncular.fail_reaction('pb', '["pb","c","cc","y"]', 'w', NULL, false, 0, 250, 10550) AS y_fail_4_base_0;
SELECT key, attempts, available FROM pg_temp.rx WHERE key = 'y';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10550 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10550);
SELECT syncular.complete_reaction('pb', '["pb","c","cc","y"]', 'w', 10600) AS y_done;
-- x with the defaults (base 1000, cap 300000): +1000, +2000, +4000
SELECT syncular.fail_reaction('pb', '["pb","c","cc","x"]', 'w', '{"try": 1}', now_ms => 10000) AS x_fail_1;
SELECT key, attempts, available, last_failure FROM pg_temp.rx WHERE key = 'x';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_10999 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 10999);
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_11000 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 11000);
SELECT syncular.fail_reaction('pb', '["pb","c","cc","x"]', 'w', '{"try": 2}', now_ms => 11000) AS x_fail_2;
SELECT key, attempts, available, last_failure FROM pg_temp.rx WHERE key = 'x';
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_12999 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 12999);
SELECT coalesce(string_agg(idempotency_key::jsonb ->> 3, ','), '-') AS at_13000 FROM syncular.claim_reactions('pb', 'w', 10, 1000000000, 13000);
SELECT syncular.fail_reaction('pb', '["pb","c","cc","x"]', 'w', '{"try": 3}', now_ms => 13000) AS x_fail_3;
SELECT key, attempts, available FROM pg_temp.rx WHERE key = 'x';
-- z (maxAttempts 100) after 9, 10 and 80 claims with the defaults: 256000, 300000 (512000
-- capped), 300000 (2^79 * 1000 capped)
UPDATE syncular.sync_reactions SET attempts = 9 WHERE idempotency_key LIKE '%"z"]';
SELECT syncular.fail_reaction('pb', '["pb","c","cc","z"]', 'w', NULL, now_ms => 10000) AS z_fail_9;
SELECT attempts, available_at_ms - 10000 AS delay_9 FROM syncular.sync_reactions WHERE idempotency_key LIKE '%"z"]';
UPDATE syncular.sync_reactions SET status = 'leased', lease_owner = 'w', lease_expires_at_ms = 1, attempts = 10 WHERE idempotency_key LIKE '%"z"]';
SELECT syncular.fail_reaction('pb', '["pb","c","cc","z"]', 'w', NULL, now_ms => 10000) AS z_fail_10;
SELECT attempts, available_at_ms - 10000 AS delay_10 FROM syncular.sync_reactions WHERE idempotency_key LIKE '%"z"]';
UPDATE syncular.sync_reactions SET status = 'leased', lease_owner = 'w', lease_expires_at_ms = 1, attempts = 80 WHERE idempotency_key LIKE '%"z"]';
SELECT syncular.fail_reaction('pb', '["pb","c","cc","z"]', 'w', NULL, now_ms => 10000) AS z_fail_80;
SELECT attempts, available_at_ms - 10000 AS delay_80 FROM syncular.sync_reactions WHERE idempotency_key LIKE '%"z"]';
-- argument refusals (checked before the owner)
SELECT pg_temp.try($$SELECT syncular.fail_reaction('pb', 'k', 'w', NULL, false, -1)$$) AS base_negative,
       pg_temp.try($$SELECT syncular.fail_reaction('pb', 'k', 'w', NULL, false, 1000, NULL)$$) AS cap_null;
DELETE FROM syncular.sync_reactions;

-- ---------------------------------------------------------------------------------------------
-- dead letter: after max_attempts claims, or at once when permanent
SELECT syncular._enqueue_reactions('pd', 'c', 'cc', 1,
  jsonb_build_array(pg_temp.rec('m2', '{"maxAttempts": 2}'), pg_temp.rec('perm'), pg_temp.rec('m1', '{"maxAttempts": 1}')), 0) AS n;
SELECT count(*) AS claimed FROM syncular.claim_reactions('pd', 'w', 10, 100, 1000);
SELECT syncular.fail_reaction('pd', '["pd","c","cc","m2"]', 'w', '{"n": 1}', now_ms => 1000) AS m2_after_1,
       syncular.fail_reaction('pd', '["pd","c","cc","perm"]', 'w', '{"bad": "input"}', true, now_ms => 1000) AS perm_after_1,
       syncular.fail_reaction('pd', '["pd","c","cc","m1"]', 'w', '{"n": 1}', now_ms => 1000) AS m1_after_1;
SELECT count(*) AS claimed FROM syncular.claim_reactions('pd', 'w', 10, 100, 2000);
SELECT syncular.fail_reaction('pd', '["pd","c","cc","m2"]', 'w', '{"n": 2}', now_ms => 2000) AS m2_after_2;
SELECT * FROM pg_temp.rx;
-- dead-letter rows are never claimed; fail / complete by the old owner refuse
SELECT count(*) AS claimed_later FROM syncular.claim_reactions('pd', 'w', 10, 100, 999999);
SELECT syncular.fail_reaction('pd', '["pd","c","cc","m2"]', 'w', '{}', now_ms => 3000) IS NULL AS fail_dead_is_null,
       syncular.complete_reaction('pd', '["pd","c","cc","m2"]', 'w', 3000) AS complete_dead;

-- retry: dead-letter -> pending, attempts 0, available now (last_failure kept)
SELECT syncular.retry_dead_letter_reaction('pd', '["pd","c","cc","m2"]', 5000) AS retry_m2,
       syncular.retry_dead_letter_reaction('pd', '["pd","c","cc","m2"]', 5000) AS retry_m2_again,
       syncular.retry_dead_letter_reaction('pd', '["pd","c","cc","nope"]', 5000) AS retry_unknown,
       syncular.retry_dead_letter_reaction('px', '["pd","c","cc","perm"]', 5000) AS retry_other_partition;
SELECT * FROM pg_temp.rx WHERE key = 'm2';
SELECT idempotency_key::jsonb ->> 3 AS key, attempts FROM syncular.claim_reactions('pd', 'w', 10, 100, 5000);
-- a leased row cannot be "retried"
SELECT syncular.retry_dead_letter_reaction('pd', '["pd","c","cc","m2"]', 5000) AS retry_leased;
DELETE FROM syncular.sync_reactions;

-- ---------------------------------------------------------------------------------------------
-- prune: completed older than the cutoff (strictly), then dead letters, at most max_rows
INSERT INTO syncular.sync_reactions (partition, idempotency_key, type, version, payload, source_client_id,
  source_client_commit_id, source_commit_seq, created_at_ms, available_at_ms, status, attempts, max_attempts,
  lease_owner, lease_expires_at_ms, completed_at_ms)
SELECT part, format('["%s","c","cc","%s"]', part, k), 't', 1, '{}', 'c', 'cc', 1, 0, avail, st, 1, 10,
       CASE WHEN st = 'leased' THEN 'w' END, CASE WHEN st = 'leased' THEN 0 END, done
  FROM (VALUES ('pp', 'done-100', 'completed', 0, 100), ('pp', 'done-200', 'completed', 0, 200),
               ('pp', 'done-300', 'completed', 0, 300), ('pp', 'done-400', 'completed', 0, 400),
               ('pp', 'dead-100', 'dead-letter', 100, NULL), ('pp', 'dead-150', 'dead-letter', 150, NULL),
               ('pp', 'dead-500', 'dead-letter', 500, NULL),
               ('pp', 'pending-0', 'pending', 0, NULL), ('pp', 'leased-0', 'leased', 0, NULL),
               ('other', 'done-1', 'completed', 0, 1)) v(part, k, st, avail, done);
-- now 1000, completed older than 700 ms (cutoff 300: 100 and 200; 300 is not older), dead
-- letters older than 850 ms (cutoff 150: only dead-100), at most 2 rows: the two completed
SELECT syncular.prune_reactions('pp', 700, 850, 2, 1000) AS pruned;
SELECT string_agg(key, ',' ORDER BY key) AS remaining FROM pg_temp.rx WHERE part = 'pp';
-- budget left after the completed rows goes to the dead letters
SELECT syncular.prune_reactions('pp', 600, 850, 2, 1000) AS pruned;
SELECT string_agg(key, ',' ORDER BY key) AS remaining FROM pg_temp.rx WHERE part = 'pp';
SELECT syncular.prune_reactions('pp', 0, 0, 100, 1000) AS pruned;
SELECT string_agg(key, ',' ORDER BY key) AS remaining FROM pg_temp.rx WHERE part = 'pp';
-- the other partition and non-terminal rows are untouched
SELECT part, key, status FROM pg_temp.rx ORDER BY part, key;
-- defaults: 30 days for completed rows, 90 days for dead letters
INSERT INTO syncular.sync_reactions (partition, idempotency_key, type, version, payload, source_client_id,
  source_client_commit_id, source_commit_seq, created_at_ms, available_at_ms, status, attempts, max_attempts, completed_at_ms)
VALUES ('pq', '["pq","c","cc","done"]', 't', 1, '{}', 'c', 'cc', 1, 0, 0, 'completed', 1, 10, 1000),
       ('pq', '["pq","c","cc","dead"]', 't', 1, '{}', 'c', 'cc', 1, 0, 1000, 'dead-letter', 1, 10, NULL);
SELECT syncular.prune_reactions('pq', now_ms => 1000 + 2592000000) AS at_30_days,
       syncular.prune_reactions('pq', now_ms => 1001 + 2592000000) AS after_30_days,
       syncular.prune_reactions('pq', now_ms => 1000 + 7776000000) AS at_90_days,
       syncular.prune_reactions('pq', now_ms => 1001 + 7776000000) AS after_90_days;
SELECT pg_temp.try($$SELECT syncular.prune_reactions('pp', max_rows => 0)$$) AS max_rows_0,
       pg_temp.try($$SELECT syncular.prune_reactions('pp', max_rows => 100001)$$) AS max_rows_100001;
SELECT pg_temp.try($$SELECT syncular.prune_reactions('pp', -1)$$) AS completed_negative,
       pg_temp.try($$SELECT syncular.prune_reactions('pp', 0, NULL)$$) AS dead_null;

-- ---------------------------------------------------------------------------------------------
-- the view: key and due by the wall clock
DELETE FROM syncular.sync_reactions;
SELECT syncular._enqueue_reactions('pv', 'c', 'cc', 1,
  jsonb_build_array(pg_temp.rec('past'), pg_temp.rec('future'), pg_temp.rec('live'), pg_temp.rec('expired')), 0) AS n;
UPDATE syncular.sync_reactions SET available_at_ms = 9000000000000 WHERE idempotency_key LIKE '%"future"]';
UPDATE syncular.sync_reactions SET status = 'leased', lease_owner = 'w', lease_expires_at_ms = 9000000000000
 WHERE idempotency_key LIKE '%"live"]';
UPDATE syncular.sync_reactions SET status = 'leased', lease_owner = 'w', lease_expires_at_ms = 1
 WHERE idempotency_key LIKE '%"expired"]';
SELECT key, status, due, type, version, payload FROM syncular.reactions ORDER BY key;
-- without now_ms the wall clock drives the claim: past and expired are due
SELECT string_agg(idempotency_key::jsonb ->> 3, ',' ORDER BY idempotency_key) AS claimed_by_wall_clock
  FROM syncular.claim_reactions('pv', 'w9');

-- privileges: nothing for PUBLIC; the worker functions are SECURITY DEFINER
SELECT p.proname, p.prosecdef AS security_definer, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute,
       p.proconfig AS config
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace
   AND p.proname IN ('_enqueue_reactions', 'claim_reactions', 'renew_reaction_lease', 'complete_reaction',
                     'fail_reaction', 'retry_dead_letter_reaction', 'prune_reactions')
 ORDER BY 1;
SELECT has_table_privilege('public', 'syncular.reactions', 'SELECT') AS public_select_view;

\c :orig_db
DROP DATABASE syncular_t_reactions;
