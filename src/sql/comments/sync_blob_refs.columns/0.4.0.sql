COMMENT ON COLUMN syncular.sync_blob_refs.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_blob_refs.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_blob_refs.row_id IS 'Primary key of the synced row whose blob_ref column references the blob.';
COMMENT ON COLUMN syncular.sync_blob_refs.blob_id IS 'Blob id: "sha256:<hex of the bytes>" (SPEC §5.9).';
