CREATE FUNCTION syncular.claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(claim_checkpoint.partition, claim_checkpoint.name);
  IF claim_checkpoint.schema_version IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET owner_epoch = k.owner_epoch + 1,
         state = CASE WHEN k.state = 'declared' THEN 'backfilling' ELSE k.state END,
         schema_version = claim_checkpoint.schema_version,
         updated_at_ms = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE k.partition = claim_checkpoint.partition AND k.name = claim_checkpoint.name
     AND k.state <> 'activated'
  RETURNING k.* INTO c;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared',
      'backfill checkpoint is not declared or is already activated',
      jsonb_build_object('partition', claim_checkpoint.partition, 'name', claim_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
