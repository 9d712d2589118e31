CREATE INDEX sync_blobs_gc ON syncular.sync_blobs (created_at_ms);
