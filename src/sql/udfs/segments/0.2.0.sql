CREATE FUNCTION syncular.segments(partition text DEFAULT NULL)
RETURNS TABLE(segment_id text, media_type smallint, tbl text, schema_version integer, scope_digest text,
              as_of_commit_seq bigint, row_cursor text, next_row_cursor text, row_count bigint,
              byte_length bigint, created_at_ms bigint, expires_at_ms bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT p.segment_id, p.media_type, p.tbl, p.schema_version, p.scope_digest, p.as_of_commit_seq,
         p.row_cursor, p.next_row_cursor, s.row_count, s.byte_length, p.created_at_ms, p.expires_at_ms
    FROM syncular.sync_segment_publications p JOIN syncular.sync_segments s USING (segment_id)
   WHERE $1 IS NULL OR p.partition = $1
   ORDER BY p.partition, p.tbl, p.as_of_commit_seq, p.created_at_ms, p.row_cursor NULLS FIRST
$$;
