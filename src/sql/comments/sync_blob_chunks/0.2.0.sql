COMMENT ON TABLE syncular.sync_blob_chunks IS
'The bytes of stored blobs (SPEC §5.9.2): chunks of at most 1 MiB per (upload_id, seq), in order; STORAGE EXTERNAL. Written in the uploading transaction, deleted with their blob by blob_gc.';
