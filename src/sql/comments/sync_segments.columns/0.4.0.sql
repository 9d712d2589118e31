COMMENT ON COLUMN syncular.sync_segments.segment_id IS 'Content address of the segment (SPEC §5).';
COMMENT ON COLUMN syncular.sync_segments.media_type IS 'Segment media type: 1 SSG2 rows, 2 SQLite image (SPEC §5.3).';
COMMENT ON COLUMN syncular.sync_segments.byte_length IS 'Size of the segment bytes.';
COMMENT ON COLUMN syncular.sync_segments.row_count IS 'Rows in the segment.';
COMMENT ON COLUMN syncular.sync_segments.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_segments.bytes IS 'The segment bytes (SSG2 or SQLite image).';
