CREATE FUNCTION syncular._checkpoint_json(c syncular.sync_backfill_checkpoints)
RETURNS jsonb LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object('partition', c.partition, 'name', c.name,
                            'schemaVersion', c.schema_version, 'state', c.state,
                            'watermark', c.watermark, 'ownerEpoch', c.owner_epoch,
                            'observedRows', c.observed_rows, 'updatedAtMs', c.updated_at_ms)
$$;
