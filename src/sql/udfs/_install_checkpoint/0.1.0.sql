-- install (§3.2): the declared row (never touching an existing one) and the fence raise.
CREATE FUNCTION syncular._install_checkpoint(partition text, name text, schema_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO syncular.sync_backfill_checkpoints AS c
         (partition, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms)
  VALUES (_install_checkpoint.partition, _install_checkpoint.name, _install_checkpoint.schema_version,
          'declared', 0, 0, 0, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
  ON CONFLICT (partition, name) DO NOTHING;

  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  VALUES (_install_checkpoint.partition, _install_checkpoint.schema_version)
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
