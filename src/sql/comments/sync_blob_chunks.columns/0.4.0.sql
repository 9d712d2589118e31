COMMENT ON COLUMN syncular.sync_blob_chunks.upload_id IS 'Upload that wrote the bytes (chunks of one upload share it).';
COMMENT ON COLUMN syncular.sync_blob_chunks.seq IS 'Position of the chunk within its upload, from 0.';
COMMENT ON COLUMN syncular.sync_blob_chunks.data IS 'Chunk bytes (at most 1 MiB).';
