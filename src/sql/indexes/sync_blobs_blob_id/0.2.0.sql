-- a download token names the blob and a partition token: the verifier finds the partition here
CREATE INDEX sync_blobs_blob_id ON syncular.sync_blobs (blob_id);
