-- The first checkpoint, in (partition, name) order, that is incomplete at `running_version`
-- (schema_version = running, state <> activated; all partitions) and not covered by a
-- declaration (matched on partition + name only, §3.1).  No row when every one is covered.
CREATE FUNCTION syncular._first_undeclared_checkpoint(checkpoints jsonb, running_version integer,
  OUT partition text, OUT name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  decl jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', d.partition, 'name', d.name)), '[]'::jsonb)
    INTO decl FROM syncular._checkpoint_declarations(_first_undeclared_checkpoint.checkpoints) d;
  SELECT c.partition, c.name INTO _first_undeclared_checkpoint.partition, _first_undeclared_checkpoint.name
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.schema_version = _first_undeclared_checkpoint.running_version
     AND c.state <> 'activated'
     AND NOT decl @> jsonb_build_array(jsonb_build_object('partition', c.partition, 'name', c.name))
   ORDER BY c.partition COLLATE "C", c.name COLLATE "C"
   LIMIT 1;
END
$$;
