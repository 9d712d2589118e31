CREATE INDEX sync_blob_refs_by_blob ON syncular.sync_blob_refs (partition, blob_id);
