COMMENT ON TABLE syncular.sync_backfill_checkpoints IS
'RFC 0007 backfill checkpoints per (partition, name): the schema version they gate, state declared / backfilling / activated, owner epoch, watermark and observed rows. A pending checkpoint refuses rounds with sync.schema_not_ready. API: declare/claim/advance/activate_checkpoint.';
