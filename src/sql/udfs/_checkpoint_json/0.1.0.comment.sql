COMMENT ON FUNCTION syncular._checkpoint_json(syncular.sync_backfill_checkpoints) IS
'Internal. One sync_backfill_checkpoints row as JSON {partition, name, schemaVersion, state, watermark, '
'ownerEpoch, observedRows, updatedAtMs} (numbers for the integer columns; updatedAtMs in ms since the Unix epoch). '
'Never raises.';
