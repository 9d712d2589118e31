CREATE FUNCTION syncular.advance_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  n bigint;
BEGIN
  IF advance_checkpoint.watermark IS NULL OR advance_checkpoint.observed_rows IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'advance_checkpoint needs a watermark and an observed row count',
      jsonb_build_object('field', CASE WHEN advance_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'observedRows' END));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET watermark = advance_checkpoint.watermark,
         observed_rows = advance_checkpoint.observed_rows,
         updated_at_ms = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE k.partition = advance_checkpoint.partition AND k.name = advance_checkpoint.name
     AND k.owner_epoch = advance_checkpoint.owner_epoch;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END
$$;
