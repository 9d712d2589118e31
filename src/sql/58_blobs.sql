-- syncular install script, part 58: the blob store (SPEC §5.9; src/blobs.c; docs/blobs.md).

--#include sequences/sync_blob_upload_seq/0.2.0.sql

CREATE TABLE syncular.sync_blobs (
  partition      TEXT COLLATE "C" NOT NULL,
  blob_id        TEXT COLLATE "C" NOT NULL CHECK (blob_id ~ '^sha256:[0-9a-f]{64}$'),
  byte_length    BIGINT NOT NULL CHECK (byte_length >= 0),
  uploader       TEXT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  upload_id      BIGINT NOT NULL UNIQUE,
  PRIMARY KEY (partition, blob_id)
);
--#include indexes/sync_blobs_gc/0.2.0.sql

--#include tables/sync_blob_chunks/0.2.0.sql
-- out of line and never compressed: blobs are mostly compressed media, and a chunk is read whole
ALTER TABLE syncular.sync_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

--#include config_dump/sync_blobs/0.2.0.sql
REVOKE ALL ON syncular.sync_blobs, syncular.sync_blob_chunks, syncular.sync_blob_upload_seq FROM PUBLIC;

--#include comments/sync_blobs/0.2.0.sql
--#include comments/sync_blob_chunks/0.2.0.sql

--#include udfs/blob_upload_begin/0.2.0.sql

--#include udfs/blob_upload_append/0.2.0.sql

--#include udfs/blob_upload_finish/0.2.0.sql

--#include udfs/put_blob/0.2.0.sql

--#include udfs/blob_get/0.2.0.sql

--#include udfs/blob_gc/0.4.0.sql

--#include udfs/blob_upload_begin/0.2.0.comment.sql
--#include udfs/blob_upload_append/0.2.0.comment.sql
--#include udfs/blob_upload_finish/0.2.0.comment.sql
--#include udfs/put_blob/0.2.0.comment.sql
--#include udfs/blob_get/0.2.0.comment.sql
--#include udfs/blob_gc/0.2.0.comment.sql
