-- §3.3 hasSourceChangesAbove
CREATE FUNCTION syncular._source_changes_above(partition text, tables text[], seq bigint)
RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  horizon bigint;
BEGIN
  SELECT coalesce((SELECT p.horizon_seq FROM syncular.sync_partitions p
                    WHERE p.partition = _source_changes_above.partition), 0)
    INTO horizon;
  IF coalesce(cardinality(_source_changes_above.tables), 0) = 0 THEN
    RETURN 'clean';
  END IF;
  IF EXISTS (SELECT 1 FROM syncular.changes ch
              WHERE ch.partition = _source_changes_above.partition
                AND ch.tbl = ANY (_source_changes_above.tables)
                AND ch.commit_seq > _source_changes_above.seq) THEN
    RETURN 'changed';
  END IF;
  IF horizon > _source_changes_above.seq THEN
    RETURN 'unverifiable';
  END IF;
  RETURN 'clean';
END
$$;
