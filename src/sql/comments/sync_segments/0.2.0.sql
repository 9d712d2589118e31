COMMENT ON TABLE syncular.sync_segments IS
'Segment store (SPEC §5.1): one row per content address (sha256:<hex> of the uncompressed bytes), media type '
'1 = rows (SSG2), 2 = sqlite. UNLOGGED cache: emptied by crash recovery, not readable on a standby. Written by '
'the pull, read by syncular.segment_download, forgotten by syncular.prune_segments.';
