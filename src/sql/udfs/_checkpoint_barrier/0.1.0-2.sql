CREATE FUNCTION syncular._checkpoint_barrier(checkpoints jsonb, running_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  u record;
BEGIN
  SELECT * INTO u FROM syncular._first_undeclared_checkpoint(_checkpoint_barrier.checkpoints,
                                                            _checkpoint_barrier.running_version);
  IF u.name IS NOT NULL THEN
    PERFORM syncular._raise('sync.storage.checkpoint_incomplete',
      'a declared backfill checkpoint is not activated and this caller did not declare it',
      jsonb_build_object('phase', 'backfill_checkpoint', 'partition', u.partition, 'name', u.name));
  END IF;
END
$$;
