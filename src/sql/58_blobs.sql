-- syncular install script, part 58: the blob store (SPEC §5.9; src/blobs.c; docs/blobs.md).

CREATE SEQUENCE syncular.sync_blob_upload_seq;

CREATE TABLE syncular.sync_blobs (
  partition      TEXT NOT NULL,
  blob_id        TEXT NOT NULL CHECK (blob_id ~ '^sha256:[0-9a-f]{64}$'),
  byte_length    BIGINT NOT NULL CHECK (byte_length >= 0),
  uploader       TEXT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  upload_id      BIGINT NOT NULL UNIQUE,
  PRIMARY KEY (partition, blob_id)
);
CREATE INDEX sync_blobs_gc ON syncular.sync_blobs (created_at_ms);

CREATE TABLE syncular.sync_blob_chunks (
  upload_id  BIGINT NOT NULL,
  seq        INTEGER NOT NULL,
  data       BYTEA NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
-- out of line and never compressed: blobs are mostly compressed media, and a chunk is read whole
ALTER TABLE syncular.sync_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blobs', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_chunks', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_upload_seq', '');
REVOKE ALL ON syncular.sync_blobs, syncular.sync_blob_chunks, syncular.sync_blob_upload_seq FROM PUBLIC;

COMMENT ON TABLE syncular.sync_blobs IS
'The blob store (SPEC §5.9.2): one row per stored blob, content-addressed per partition (blob_id = "sha256:" + hex of the bytes), with its length, uploader (actor), upload time and the upload_id whose sync_blob_chunks rows hold the bytes. Written by blob_upload_finish / put_blob after the content address was verified; deleted by blob_gc.';
COMMENT ON TABLE syncular.sync_blob_chunks IS
'The bytes of stored blobs (SPEC §5.9.2): chunks of at most 1 MiB per (upload_id, seq), in order; STORAGE EXTERNAL. Written in the uploading transaction, deleted with their blob by blob_gc.';

CREATE FUNCTION syncular.blob_upload_begin(partition text, actor_id text, blob_id text,
                                           byte_length bigint DEFAULT NULL)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_begin';

CREATE FUNCTION syncular.blob_upload_append(upload bigint, chunk bytea)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_append';

CREATE FUNCTION syncular.blob_upload_finish(upload bigint)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_finish';

CREATE FUNCTION syncular.put_blob(partition text, actor_id text, blob_id text, body bytea)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_put_blob';

CREATE FUNCTION syncular.blob_get(partition text, actor_id text, blob_id text,
                                  client_id text DEFAULT '')
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_get';

CREATE FUNCTION syncular.blob_gc(partition text DEFAULT NULL, grace_ms bigint DEFAULT 86400000,
                                 max_blobs integer DEFAULT 1000)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cutoff   bigint;
  b        record;
  n        bigint;
  blobs    bigint := 0;
  chunks   bigint := 0;
  scanned  integer := 0;
BEGIN
  IF grace_ms IS NULL OR grace_ms < 0 OR max_blobs IS NULL OR max_blobs < 1 THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc: grace_ms >= 0 and max_blobs >= 1 are required',
                            jsonb_build_object('graceMs', grace_ms, 'maxBlobs', max_blobs));
  END IF;
  -- the re-check after the lock needs a fresh snapshot per statement (§5.9.2: never delete a
  -- referenced blob)
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc runs in READ COMMITTED only',
                            jsonb_build_object('isolation', current_setting('transaction_isolation')));
  END IF;
  cutoff := syncular.now_ms() - grace_ms;
  FOR b IN
    SELECT s.partition, s.blob_id, s.upload_id FROM syncular.sync_blobs s
     WHERE (blob_gc.partition IS NULL OR s.partition = blob_gc.partition)
       AND s.created_at_ms < cutoff
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id)
     ORDER BY s.created_at_ms
     LIMIT max_blobs
       FOR UPDATE OF s SKIP LOCKED
  LOOP
    scanned := scanned + 1;
    DELETE FROM syncular.sync_blobs s
     WHERE s.partition = b.partition AND s.blob_id = b.blob_id
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
      blobs := blobs + 1;
      DELETE FROM syncular.sync_blob_chunks c WHERE c.upload_id = b.upload_id;
      GET DIAGNOSTICS n = ROW_COUNT;
      chunks := chunks + n;
    END IF;
  END LOOP;
  RETURN jsonb_build_object('deletedBlobs', blobs, 'deletedChunks', chunks,
                            'mayHaveMore', scanned >= max_blobs);
END $$;

COMMENT ON FUNCTION syncular.blob_upload_begin(text, text, text, bigint) IS
'Blob upload, step 1 (SPEC §5.9.3; docs/blobs.md): PUT <mount>/blobs/{blobId}. partition: the authenticated tenant; actor_id: the uploader (recorded; upload is host authentication only, no scope check); blob_id: "sha256:" + 64 lowercase hex; byte_length: the request''s Content-Length in bytes, or NULL. Returns the upload handle for blob_upload_append / blob_upload_finish, valid in this transaction only (a transaction that began an upload cannot commit without finishing it). '
'Errors: sync.invalid_request (22023: NULL or empty argument, malformed blob_id, negative byte_length), blob.too_large (22023, HTTP 413: byte_length over syncular.blob_max_bytes). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_upload_append(bigint, bytea) IS
'Blob upload, step 2 (SPEC §5.9.3; docs/blobs.md): hash and store the next piece of the body (any size; stored as chunks of at most 1 MiB). upload: the handle of blob_upload_begin; chunk: the bytes. Returns the bytes received so far. Errors: sync.invalid_request (22023: NULL argument, unknown or finished handle), blob.too_large (22023, HTTP 413: the streamed count over syncular.blob_max_bytes). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_upload_finish(bigint) IS
'Blob upload, step 3 (SPEC §5.9.3; docs/blobs.md): compare "sha256:" + hex(SHA-256 of the received bytes) with the blob_id and store the blob. Returns {"blobId", "byteLength", "stored": false when the blob was already stored (idempotent success, nothing written)}. Errors: blob.hash_mismatch (22023, HTTP 400: nothing is stored once the transaction rolls back), sync.invalid_request (22023: NULL argument, unknown or finished handle, an append rolled back by a savepoint). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.put_blob(text, text, text, bytea) IS
'Blob upload in one call (SPEC §5.9.3; docs/blobs.md): blob_upload_begin + blob_upload_append + blob_upload_finish over body (memory: body once plus one 1 MiB slice). Arguments as blob_upload_begin, body the bytes. Returns and errors as the three steps. SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_get(text, text, text, text) IS
'Blob download (SPEC §5.9.5; docs/blobs.md): GET <mount>/blobs/{blobId}. partition, actor_id: the authenticated tenant and actor; blob_id: the path parameter; client_id: passed to the scope resolver (default ''''). Re-authorizes on every call from the referencing rows (sync_blob_refs): allowed when one of them passes the write-authorization rule (SPEC §3.4) under the actor''s grant. '
'Returns status 200 rows, one per stored chunk in order (content_type application/octet-stream, byte_length the total size in bytes, body the chunk; one empty row for an empty blob), or one row with status 404 blob.not_found (no such blob in the partition, or a malformed id) / 403 blob.forbidden (no referencing row passes, or the resolver failed), content_type application/json, byte_length NULL and the JSON error body. Errors: sync.invalid_request (22023: NULL or empty partition, actor_id or blob_id). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_gc(text, bigint, integer) IS
'Blob garbage collection (SPEC §5.9.2; docs/blobs.md): deletes blobs of partition (every partition when NULL) that no row references (sync_blob_refs) and that were uploaded more than grace_ms milliseconds ago (default 24 h), with their chunks, at most max_blobs per call. Each candidate is locked FOR UPDATE SKIP LOCKED and re-checked after the lock, so a blob a concurrent push references is kept. Returns {"deletedBlobs", "deletedChunks", "mayHaveMore"}. Errors: sync.invalid_request (22023: grace_ms < 0, max_blobs < 1, or an isolation level other than READ COMMITTED). Owner only.';
