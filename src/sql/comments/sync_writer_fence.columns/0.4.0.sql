COMMENT ON COLUMN syncular.sync_writer_fence.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_writer_fence.required_writer_version IS 'Writer version every push into the partition must have (RFC 0007 writer fence).';
