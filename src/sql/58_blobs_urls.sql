-- syncular install script, part 58b: signed blob URLs — presigned upload grants (SPEC §5.9.3)
-- and presigned downloads (§5.9.5), the native token of §5.4 (src/blobs.c, src/segurl.c;
-- docs/blobs.md).

--#include indexes/sync_blobs_blob_id/0.2.0.sql

--#include udfs/blob_upload_grant/0.2.0.sql

--#include udfs/blob_url_upload_begin/0.2.0.sql

--#include udfs/blob_url_get/0.2.0.sql

--#include udfs/blob_upload_grant/0.2.0.comment.sql
--#include udfs/blob_url_upload_begin/0.2.0.comment.sql
--#include udfs/blob_url_get/0.2.0.comment.sql
--#include udfs/blob_get/0.2.0-2.comment.sql
