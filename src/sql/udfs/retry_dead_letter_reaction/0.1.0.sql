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
