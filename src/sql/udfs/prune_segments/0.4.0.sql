CREATE FUNCTION syncular.prune_segments(now_ms bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     bigint := coalesce(now_ms, syncular.now_ms());
  pubs  bigint;
  segs  bigint;
BEGIN
  DELETE FROM syncular.sync_segment_publications p WHERE p.expires_at_ms <= t;
  GET DIAGNOSTICS pubs = ROW_COUNT;
  DELETE FROM syncular.sync_segments s
   WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_segment_publications p WHERE p.segment_id = s.segment_id);
  GET DIAGNOSTICS segs = ROW_COUNT;
  RETURN jsonb_build_object('publications', pubs, 'segments', segs);
END $$;
