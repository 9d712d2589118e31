CREATE FUNCTION syncular.declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(declare_checkpoint.partition, declare_checkpoint.name);
  IF declare_checkpoint.schema_version IS NULL OR declare_checkpoint.schema_version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  PERFORM syncular._install_checkpoint(declare_checkpoint.partition, declare_checkpoint.name,
                                       declare_checkpoint.schema_version);
  SELECT * INTO c FROM syncular.sync_backfill_checkpoints k
   WHERE k.partition = declare_checkpoint.partition AND k.name = declare_checkpoint.name;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared', 'backfill checkpoint is not declared',
      jsonb_build_object('partition', declare_checkpoint.partition, 'name', declare_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
