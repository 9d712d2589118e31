CREATE FUNCTION syncular.activate_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, sources text[])
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  cp_version integer;
  fence integer;
  coverage text;
  n bigint;
BEGIN
  PERFORM syncular._checkpoint_args(activate_checkpoint.partition, activate_checkpoint.name);
  IF activate_checkpoint.owner_epoch IS NULL OR activate_checkpoint.watermark IS NULL
     OR activate_checkpoint.sources IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'activate_checkpoint needs an owner epoch, a watermark and a source table list',
      jsonb_build_object('field', CASE WHEN activate_checkpoint.owner_epoch IS NULL THEN 'ownerEpoch'
                                       WHEN activate_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'sources' END));
  END IF;

  -- the partition write lock, the lock a push takes (docs/storage.md "The partition lock")
  PERFORM syncular._partition_lock(activate_checkpoint.partition);

  -- (1) the fence must cover the checkpoint's version
  SELECT (SELECT k.schema_version FROM syncular.sync_backfill_checkpoints k
           WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name),
         (SELECT f.required_writer_version FROM syncular.sync_writer_fence f
           WHERE f.partition = activate_checkpoint.partition)
    INTO cp_version, fence;
  IF cp_version IS NULL OR fence IS NULL OR fence < cp_version THEN
    PERFORM syncular._raise('sync.storage.checkpoint_fence_missing',
      'the writer fence does not cover the backfill checkpoint''s schema version',
      jsonb_build_object('partition', activate_checkpoint.partition, 'name', activate_checkpoint.name,
                         'schemaVersion', cp_version, 'requiredWriterVersion', fence));
  END IF;

  -- (2) coverage of the source tables above the watermark; nothing is written on a refusal
  coverage := syncular._source_changes_above(activate_checkpoint.partition, activate_checkpoint.sources,
                                              activate_checkpoint.watermark);
  IF coverage = 'changed' THEN
    RETURN 'stale';
  ELSIF coverage = 'unverifiable' THEN
    RETURN 'unverifiable';
  END IF;

  -- (3) activate under the owner's epoch
  UPDATE syncular.sync_backfill_checkpoints k
     SET state = 'activated',
         watermark = activate_checkpoint.watermark,
         updated_at_ms = syncular.now_ms()
   WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name
     AND k.owner_epoch = activate_checkpoint.owner_epoch AND k.state <> 'activated';
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN CASE WHEN n = 1 THEN 'activated' ELSE 'stale' END;
END
$$;
