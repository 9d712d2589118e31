COMMENT ON COLUMN syncular.sync_blobs.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_blobs.blob_id IS 'Blob id: "sha256:<hex of the bytes>" (SPEC §5.9).';
COMMENT ON COLUMN syncular.sync_blobs.byte_length IS 'Size of the blob in bytes (verified at upload).';
COMMENT ON COLUMN syncular.sync_blobs.uploader IS 'Actor that uploaded the blob.';
COMMENT ON COLUMN syncular.sync_blobs.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_blobs.upload_id IS 'Upload that wrote the bytes (chunks of one upload share it).';
