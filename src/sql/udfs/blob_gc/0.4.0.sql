CREATE FUNCTION syncular.blob_gc(partition text DEFAULT NULL, grace_ms bigint DEFAULT 86400000,
                                 max_blobs integer DEFAULT 1000)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cutoff   bigint;
  b        record;
  n        bigint;
  blobs    bigint := 0;
  chunks   bigint := 0;
  scanned  integer := 0;
BEGIN
  IF grace_ms IS NULL OR grace_ms < 0 OR max_blobs IS NULL OR max_blobs < 1 THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc: grace_ms >= 0 and max_blobs >= 1 are required',
                            jsonb_build_object('graceMs', grace_ms, 'maxBlobs', max_blobs));
  END IF;
  -- the re-check after the lock needs a fresh snapshot per statement (§5.9.2: never delete a
  -- referenced blob)
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc runs in READ COMMITTED only',
                            jsonb_build_object('isolation', current_setting('transaction_isolation')));
  END IF;
  cutoff := syncular.now_ms() - grace_ms;
  FOR b IN
    SELECT s.partition, s.blob_id, s.upload_id FROM syncular.sync_blobs s
     WHERE (blob_gc.partition IS NULL OR s.partition = blob_gc.partition)
       AND s.created_at_ms < cutoff
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id)
     ORDER BY s.created_at_ms
     LIMIT max_blobs
       FOR UPDATE OF s SKIP LOCKED
  LOOP
    scanned := scanned + 1;
    DELETE FROM syncular.sync_blobs s
     WHERE s.partition = b.partition AND s.blob_id = b.blob_id
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
      blobs := blobs + 1;
      DELETE FROM syncular.sync_blob_chunks c WHERE c.upload_id = b.upload_id;
      GET DIAGNOSTICS n = ROW_COUNT;
      chunks := chunks + n;
    END IF;
  END LOOP;
  RETURN jsonb_build_object('deletedBlobs', blobs, 'deletedChunks', chunks,
                            'mayHaveMore', scanned >= max_blobs);
END $$;
