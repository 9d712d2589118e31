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
