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
