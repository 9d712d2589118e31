-- The partition's log epoch, acquiring it (one header-only round) when the partition is new.
CREATE FUNCTION syncular._producer_epoch(p_partition text, p_actor_id text, p_client_id text)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text;
  compiled jsonb;
  resp jsonb;
BEGIN
  SELECT r.log_epoch INTO epoch FROM syncular.sync_partition_registry r WHERE r.partition = p_partition;
  IF epoch IS NOT NULL THEN
    RETURN epoch;
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
    'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
                         'schemaVersion', (compiled->>'version')::int),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0,
                         'maxSnapshotPages', 0, 'accept', 1)))),
    p_partition, p_actor_id));
  RETURN resp->'frames'->0->>'logEpoch';
END $$;
