-- syncular install script, part 70: durable reactions (§6.9; push-and-pull.md §2.8;
-- data-model-and-storage.md "sync_reactions", §8 "Reaction claim and prune"; docs/hooks.md).
--
-- Row life cycle (status):
--   pending --claim--> leased --complete--> completed
--                        |  \--fail (attempts < max_attempts, not permanent)--> pending (backoff)
--                        |  \--fail (attempts >= max_attempts or permanent)--> dead-letter
--                        \--lease expired--> claimable again (attempts counts every claim)
--   dead-letter --retry_dead_letter_reaction--> pending (attempts 0)
-- Invariant: lease_owner and lease_expires_at_ms are non-NULL exactly while status = 'leased'.
-- available_at_ms is the earliest claim time of a pending row and, for a dead-letter row, the
-- time it was dead-lettered (what sync_reactions_dead_letter indexes and prune_reactions ages).
-- Times are Unix epoch milliseconds.  Every function takes an optional trailing now_ms (NULL =
-- the engine's clock, syncular.now_ms()) so that callers and tests can pin time.
-- The worker functions (claim, renew, complete, fail) are SECURITY DEFINER so that an operator
-- can GRANT EXECUTE on them to a worker role without granting the catalog; like every routine
-- of the extension they are not executable by PUBLIC (90_grants).

-- The engine's clock (syncular.now_ms()) in epoch ms, or the pinned value.
CREATE FUNCTION syncular._reaction_now(now_ms bigint) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(now_ms, syncular.now_ms())
$$;
COMMENT ON FUNCTION syncular._reaction_now(bigint) IS
  'Internal. now_ms when not NULL, else the engine''s clock (syncular.now_ms(): the wall clock unless syncular.clock_override_ms / clock_offset_ms move it) in Unix epoch milliseconds. Raises nothing.';

-- A non-negative (or positive) safe-integer argument, else sync.storage.invalid_limit.
CREATE FUNCTION syncular._reaction_arg(name text, value bigint, lo bigint, hi bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF value IS NULL OR value < lo OR value > hi THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', format('%s must be an integer in %s..%s', name, lo, hi),
                            jsonb_build_object('argument', name, 'value', value, 'min', lo, 'max', hi));
  END IF;
  RETURN value;
END
$$;
COMMENT ON FUNCTION syncular._reaction_arg(text, bigint, bigint, bigint) IS
  'Internal. Returns value when lo <= value <= hi; raises sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) when it is NULL or outside the range.';

CREATE FUNCTION syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
                                            commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE C SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'syncular_enqueue_reactions';
COMMENT ON FUNCTION syncular._enqueue_reactions(text, text, text, bigint, jsonb, bigint) IS
$$Internal; called by the C push engine with the reaction planner's result for a new, validated commit, in the push transaction (push-and-pull.md §2.8; §6.9). Rejected commits and replays never call it.
Arguments: partition, client_id, client_commit_id, commit_seq of the commit; records = JSON array of {key, type, version, payload, maxAttempts?} (SQL NULL, JSON null and [] enqueue nothing); now_ms = creation time in epoch ms (NULL = the engine''s clock, syncular.now_ms(); the engine passes the commit's created_at_ms).
Rules (all records are checked before any is written): at most 100 records; each an object with no other members; key a non-empty string of at most 256 UTF-8 bytes, unique within the call; type a non-empty string of at most 128 UTF-8 bytes; version an integer 1..2147483647; payload present, any JSON value, compact JSON (syncular._compact_json) at most 65,536 UTF-8 bytes, nesting of objects/arrays at most 16 levels ({"a":1} is 1 level); maxAttempts absent/null (= 10) or an integer 1..100. Integral JSON numbers such as 3.0 count as integers.
Each record becomes a sync_reactions row: idempotency_key = compact JSON text ["<partition>","<client_id>","<client_commit_id>","<key>"] (JSON string escaping as JSON.stringify), status pending, attempts 0, created_at_ms = available_at_ms = now. A row whose idempotency_key already exists is left as it is (ON CONFLICT DO NOTHING).
Returns the number of rows inserted.
Errors: sync.storage.invalid_reaction (SQLSTATE 22023; message "invalid reaction record"; details {index?, field, reason, ...}: field is partition / clientId / clientCommitId / commitSeq (reason missing), records (not_array; too_many with count, limit), or the record member key / type / version / payload / maxAttempts / record / <unknown member>, with reason missing, not_string, empty, too_long (bytes, limit), duplicate, not_positive_i32, too_large (bytes, limit), too_deep (limit), out_of_range (min, max), not_object, unknown_field). The engine turns any error here into a server failure (sync.internal_error, nothing persisted).$$;

CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10,
                                         lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts bigint;
BEGIN
  PERFORM syncular._reaction_arg('limit', claim_reactions."limit", 1, 1000);
  PERFORM syncular._reaction_arg('lease_ms', claim_reactions.lease_ms, 1, 9007199254740991);
  IF claim_reactions.owner IS NULL OR claim_reactions.owner = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_reaction', 'a lease owner must be a non-empty string',
                            jsonb_build_object('argument', 'owner'));
  END IF;
  ts := syncular._reaction_now(now_ms);
  RETURN QUERY
  WITH due AS (
    SELECT r.idempotency_key
      FROM syncular.sync_reactions r
     WHERE r.partition = claim_reactions.partition
       AND ((r.status = 'pending' AND r.available_at_ms <= ts)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= ts))
     ORDER BY r.available_at_ms, r.created_at_ms, r.idempotency_key
     LIMIT claim_reactions."limit"
       FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE syncular.sync_reactions r
       SET status = 'leased', lease_owner = claim_reactions.owner,
           lease_expires_at_ms = ts + claim_reactions.lease_ms, attempts = r.attempts + 1
      FROM due
     WHERE r.partition = claim_reactions.partition AND r.idempotency_key = due.idempotency_key
    RETURNING r.*
  )
  SELECT c.* FROM claimed c ORDER BY c.available_at_ms, c.created_at_ms, c.idempotency_key;
END
$$;
COMMENT ON FUNCTION syncular.claim_reactions(text, text, integer, bigint, bigint) IS
$$Claims due reactions of a partition for a worker (SPEC §6.9, delivery): in one statement, a FOR UPDATE SKIP LOCKED CTE picks up to "limit" rows that are pending with available_at_ms <= now, or leased with lease_expires_at_ms <= now (an expired lease), in (available_at_ms, created_at_ms, idempotency_key) order, skipping rows another transaction holds; each becomes status leased, lease_owner = owner, lease_expires_at_ms = now + lease_ms, attempts + 1 (every claim counts as an attempt).
Arguments: owner = the worker's lease identity (non-empty); limit 1..1000 (default 10); lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock).
Returns the claimed rows (sync_reactions columns, after the update) in claim order. Concurrent claimers never receive the same row while its lease is live. SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for limit or lease_ms; sync.storage.invalid_reaction (22023; details {argument: "owner"}) for a NULL or empty owner.$$;

CREATE FUNCTION syncular.renew_reaction_lease(partition text, idempotency_key text, owner text,
                                              lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._reaction_arg('lease_ms', renew_reaction_lease.lease_ms, 1, 9007199254740991);
  UPDATE syncular.sync_reactions r
     SET lease_expires_at_ms = syncular._reaction_now(now_ms) + renew_reaction_lease.lease_ms
   WHERE r.partition = renew_reaction_lease.partition
     AND r.idempotency_key = renew_reaction_lease.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = renew_reaction_lease.owner;
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.renew_reaction_lease(text, text, text, bigint, bigint) IS
$$Extends a worker's lease (SPEC §6.9): when the row is leased and lease_owner = owner, sets lease_expires_at_ms = now + lease_ms and returns true; otherwise (another owner reclaimed it, it was completed, failed or dead-lettered, or it does not exist) changes nothing and returns false. A lease that expired but was not reclaimed yet is still the owner's and can be renewed.
Arguments: lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for lease_ms.$$;

CREATE FUNCTION syncular.complete_reaction(partition text, idempotency_key text, owner text,
                                           now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE syncular.sync_reactions r
     SET status = 'completed', completed_at_ms = syncular._reaction_now(now_ms),
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = complete_reaction.partition
     AND r.idempotency_key = complete_reaction.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = complete_reaction.owner;
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.complete_reaction(text, text, text, bigint) IS
$$Marks a delivered reaction completed (SPEC §6.9): only when the row is leased and lease_owner = owner (the current lease holder; an expired lease not yet reclaimed still counts). Sets status completed, completed_at_ms = now, clears lease_owner and lease_expires_at_ms, returns true; otherwise changes nothing and returns false (a stale owner after a reclaim, a row already completed, pending or dead-lettered, an unknown key).
now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role. Raises nothing of its own.$$;

CREATE FUNCTION syncular.fail_reaction(partition text, idempotency_key text, owner text, failure jsonb,
                                       permanent boolean DEFAULT false, base_ms bigint DEFAULT 1000,
                                       cap_ms bigint DEFAULT 300000, now_ms bigint DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts         bigint;
  new_status text;
BEGIN
  PERFORM syncular._reaction_arg('base_ms', fail_reaction.base_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('cap_ms', fail_reaction.cap_ms, 0, 9007199254740991);
  ts := syncular._reaction_now(now_ms);
  UPDATE syncular.sync_reactions r
     SET status = CASE WHEN coalesce(fail_reaction.permanent, false) OR r.attempts >= r.max_attempts
                       THEN 'dead-letter' ELSE 'pending' END,
         -- pending: now + min(base * 2^(attempts-1), cap); dead-letter: the time it died.
         -- Exponents above 64 cannot change the result (base >= 1 then exceeds any cap).
         available_at_ms = CASE WHEN coalesce(fail_reaction.permanent, false) OR r.attempts >= r.max_attempts
                                THEN ts
                                ELSE ts + least(fail_reaction.base_ms::numeric
                                                  * power(2::numeric, least(greatest(r.attempts - 1, 0), 64)),
                                                fail_reaction.cap_ms::numeric)::bigint END,
         last_failure = fail_reaction.failure,
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = fail_reaction.partition
     AND r.idempotency_key = fail_reaction.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = fail_reaction.owner
  RETURNING r.status INTO new_status;
  RETURN new_status;
END
$$;
COMMENT ON FUNCTION syncular.fail_reaction(text, text, text, jsonb, boolean, bigint, bigint, bigint) IS
$$Records a failed delivery (SPEC §6.9): only when the row is leased and lease_owner = owner. Stores failure in last_failure (as given, NULL included) and clears the lease; then, when permanent is true or attempts >= max_attempts, status dead-letter with available_at_ms = now (the dead-letter time, which prune_reactions ages); otherwise status pending with available_at_ms = now + min(base_ms * 2^(attempts - 1), cap_ms), where attempts counts the claims so far (1 after the first claim: base_ms, then 2*base_ms, 4*base_ms, ... up to cap_ms).
Arguments: failure = any JSON the worker wants to keep (e.g. {"message": ...}); permanent (default false); base_ms 0..2^53-1 (default 1,000); cap_ms 0..2^53-1 (default 300,000); now_ms = epoch ms (NULL = wall clock).
Returns the new status ('pending' or 'dead-letter'), or NULL when the caller is not the current lease owner (nothing changes). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for base_ms or cap_ms.$$;

CREATE FUNCTION syncular.retry_dead_letter_reaction(partition text, idempotency_key text,
                                                    now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE syncular.sync_reactions r
     SET status = 'pending', attempts = 0, available_at_ms = syncular._reaction_now(now_ms),
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = retry_dead_letter_reaction.partition
     AND r.idempotency_key = retry_dead_letter_reaction.idempotency_key
     AND r.status = 'dead-letter';
  RETURN FOUND;
END
$$;
COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text, text, bigint) IS
$$Operator action (SPEC §6.9, dead letters): a dead-letter row becomes pending again with attempts 0 and available_at_ms = now (claimable at once); last_failure is kept until the next failure. Returns true when a dead-letter row was moved, false otherwise (unknown key, or a row in another status: nothing changes).
now_ms = epoch ms (NULL = wall clock). Owner-only. Raises nothing of its own.$$;

CREATE FUNCTION syncular.prune_reactions(partition text,
                                         completed_older_than_ms bigint DEFAULT 2592000000,
                                         dead_letter_older_than_ms bigint DEFAULT 7776000000,
                                         max_rows integer DEFAULT 1000, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts        bigint;
  completed integer := 0;
  dead      integer := 0;
BEGIN
  PERFORM syncular._reaction_arg('completed_older_than_ms', prune_reactions.completed_older_than_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('dead_letter_older_than_ms', prune_reactions.dead_letter_older_than_ms, 0, 9007199254740991);
  PERFORM syncular._reaction_arg('max_rows', prune_reactions.max_rows, 1, 100000);
  ts := syncular._reaction_now(now_ms);

  WITH victims AS (
    SELECT r.idempotency_key
      FROM syncular.sync_reactions r
     WHERE r.partition = prune_reactions.partition AND r.status = 'completed'
       AND r.completed_at_ms < ts - prune_reactions.completed_older_than_ms
     ORDER BY r.completed_at_ms, r.idempotency_key
     LIMIT prune_reactions.max_rows
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM syncular.sync_reactions r USING victims v
   WHERE r.partition = prune_reactions.partition AND r.idempotency_key = v.idempotency_key;
  GET DIAGNOSTICS completed = ROW_COUNT;

  IF completed < prune_reactions.max_rows THEN
    WITH victims AS (
      SELECT r.idempotency_key
        FROM syncular.sync_reactions r
       WHERE r.partition = prune_reactions.partition AND r.status = 'dead-letter'
         AND r.available_at_ms < ts - prune_reactions.dead_letter_older_than_ms
       ORDER BY r.available_at_ms, r.idempotency_key
       LIMIT prune_reactions.max_rows - completed
         FOR UPDATE SKIP LOCKED
    )
    DELETE FROM syncular.sync_reactions r USING victims v
     WHERE r.partition = prune_reactions.partition AND r.idempotency_key = v.idempotency_key;
    GET DIAGNOSTICS dead = ROW_COUNT;
  END IF;
  RETURN completed + dead;
END
$$;
COMMENT ON FUNCTION syncular.prune_reactions(text, bigint, bigint, integer, bigint) IS
$$Operator maintenance (SPEC §6.9, pruning): deletes, in one bounded pass, completed rows with completed_at_ms < now - completed_older_than_ms (oldest first), then, with the rest of the budget, dead-letter rows dead-lettered before now - dead_letter_older_than_ms (available_at_ms, oldest first); at most max_rows in total. Rows locked by another transaction are skipped (FOR UPDATE SKIP LOCKED); pending and leased rows are never touched. Reactions are independent of the commit log and survive its pruning.
Arguments: completed_older_than_ms 0..2^53-1 (default 30 days = 2,592,000,000); dead_letter_older_than_ms 0..2^53-1 (default 90 days = 7,776,000,000); max_rows 1..100,000 (default 1,000); now_ms = epoch ms (NULL = wall clock).
Returns the number of rows deleted; call again while it returns max_rows. Owner-only.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}).$$;

CREATE VIEW syncular.reactions AS
SELECT r.partition,
       r.idempotency_key,
       (r.idempotency_key::jsonb ->> 3) AS key,
       r.type, r.version, r.status, r.attempts, r.max_attempts,
       r.created_at_ms, r.available_at_ms,
       r.lease_owner, r.lease_expires_at_ms, r.completed_at_ms, r.last_failure,
       ((r.status = 'pending' AND r.available_at_ms <= n.ms)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= n.ms)) AS due,
       r.source_client_id, r.source_client_commit_id, r.source_commit_seq,
       r.payload
  FROM syncular.sync_reactions r,
       LATERAL (SELECT syncular.now_ms() AS ms) n;
COMMENT ON VIEW syncular.reactions IS
  'Read-only. The durable reactions (SPEC §6.9; sync_reactions) with key = the planner''s record key (element 3 of the idempotency key) and due = claimable now by the engine''s clock, syncular.now_ms() (pending and available, or leased with an expired lease). Times in epoch ms; for a dead-letter row available_at_ms is the time it was dead-lettered. Owner-only until granted.';
REVOKE ALL ON syncular.reactions FROM PUBLIC;
