CREATE FUNCTION syncular._install_checkpoints(checkpoints jsonb, version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  d record;
BEGIN
  IF _install_checkpoints.version IS NULL OR _install_checkpoints.version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'the schema version of a bump must be >= 1', jsonb_build_object('field', 'version'));
  END IF;
  FOR d IN SELECT * FROM syncular._checkpoint_declarations(_install_checkpoints.checkpoints) LOOP
    PERFORM syncular._install_checkpoint(d.partition, d.name, d.schema_version);
  END LOOP;
  -- 0.30.4: every migration raises the fence of every known partition, never lowering one
  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  SELECT p.partition, _install_checkpoints.version FROM syncular.sync_partitions p
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
