-- syncular install script, part 58b: signed blob URLs — presigned upload grants (SPEC §5.9.3)
-- and presigned downloads (§5.9.5), the native token of §5.4 (src/blobs.c, src/segurl.c;
-- docs/blobs.md).

-- a download token names the blob and a partition token: the verifier finds the partition here
CREATE INDEX sync_blobs_blob_id ON syncular.sync_blobs (blob_id);

--#include udfs/blob_upload_grant/0.2.0.sql

--#include udfs/blob_url_upload_begin/0.2.0.sql

--#include udfs/blob_url_get/0.2.0.sql

--#include udfs/blob_upload_grant/0.2.0.comment.sql
--#include udfs/blob_url_upload_begin/0.2.0.comment.sql
--#include udfs/blob_url_get/0.2.0.comment.sql
--#include udfs/blob_get/0.2.0-2.comment.sql
