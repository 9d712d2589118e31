COMMENT ON TABLE syncular.sync_blobs IS
'The blob store (SPEC §5.9.2): one row per stored blob, content-addressed per partition (blob_id = "sha256:" + hex of the bytes), with its length, uploader (actor), upload time and the upload_id whose sync_blob_chunks rows hold the bytes. Written by blob_upload_finish / put_blob after the content address was verified; deleted by blob_gc.';
