-- syncular install script, part 58b: signed blob URLs — presigned upload grants (SPEC §5.9.3)
-- and presigned downloads (§5.9.5), the native token of §5.4 (src/blobs.c, src/segurl.c;
-- docs/blobs.md).

-- a download token names the blob and a partition token: the verifier finds the partition here
CREATE INDEX sync_blobs_blob_id ON syncular.sync_blobs (blob_id);

CREATE FUNCTION syncular.blob_upload_grant(partition text, actor_id text, blob_id text,
                                           byte_length bigint)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_grant';

CREATE FUNCTION syncular.blob_url_upload_begin(blob_id text, token text, byte_length bigint)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_upload_begin';

CREATE FUNCTION syncular.blob_url_get(blob_id text, token text)
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_get';

COMMENT ON FUNCTION syncular.blob_upload_grant(text, text, text, bigint) IS
'Presigned upload grant (SPEC §5.9.3; docs/blobs.md): POST <mount>/blobs/{blobId}/upload-grant. partition, actor_id: the authenticated tenant and uploader (host authentication only, no scope check); blob_id: "sha256:" + 64 lowercase hex; byte_length: the declared byteLength in bytes. '
'Returns {"url", "urlExpiresAtMs"} (url = syncular.blob_url_base || blob_id || ''?bt='' || token, valid syncular.blob_url_ttl; a PUT of exactly byte_length bytes to it needs no host authentication, see blob_url_upload_begin), {"present": true} when the blob is already stored, or NULL when syncular.blob_url_base is empty (no grants offered: PUT the bytes to the blob route). '
'Errors: sync.invalid_request (22023: NULL or empty argument, malformed blob_id, NULL or negative byte_length), blob.too_large (22023, HTTP 413: byte_length over syncular.blob_max_bytes, checked before any URL is minted). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_url_upload_begin(text, text, bigint) IS
'Blob upload under a presigned grant (SPEC §5.9.3; docs/blobs.md): PUT <url of blob_upload_grant> with no host authentication. blob_id: the path parameter; token: the bt query parameter; byte_length: the request''s Content-Length in bytes, which must equal the granted length. Verifies the token (HMAC, op put, blob, expiry) and begins the upload in the granted partition for the granting actor; continue with blob_upload_append / blob_upload_finish in the same transaction. Returns the upload handle. '
'Errors: blob.forbidden (42501, HTTP 403: malformed or tampered token, a token for another blob or a download, expired, or another length), sync.invalid_request (22023: NULL or empty blob_id or token), blob.too_large (22023, HTTP 413). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_url_get(text, text) IS
'Blob download through a signed URL (SPEC §5.9.5; docs/blobs.md): GET <url of blob_get> with no host authentication. blob_id: the path parameter; token: the bt query parameter. Verifies the token (HMAC, op get, blob, expiry, partition token); the actor was authorized against the referencing rows when the URL was issued, so the URL is a short-TTL grant to these bytes. '
'Returns rows as blob_get: status 200 per stored chunk, or one row 403 blob.forbidden (malformed, tampered, expired, or another blob''s token) / 404 blob.not_found (the blob is gone) with the JSON error body. Errors: sync.invalid_request (22023: NULL or empty argument). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_get(text, text, text, text) IS
'Blob download (SPEC §5.9.5; docs/blobs.md): GET <mount>/blobs/{blobId}. partition, actor_id: the authenticated tenant and actor; blob_id: the path parameter; client_id: passed to the scope resolver (default ''''). Re-authorizes on every call from the referencing rows (sync_blob_refs): allowed when one of them passes the write-authorization rule (SPEC §3.4) under the actor''s grant. '
'Returns status 200 rows, one per stored chunk in order (content_type application/octet-stream, byte_length the total size in bytes, body the chunk; one empty row for an empty blob); when syncular.blob_url_base is set, an authorized call instead returns one status 200 row with content_type application/json, byte_length NULL and body {"url", "urlExpiresAtMs"} (a signed URL served by blob_url_get, valid syncular.blob_url_ttl); or one row with status 404 blob.not_found (no such blob in the partition, or a malformed id) / 403 blob.forbidden (no referencing row passes, or the resolver failed), content_type application/json, byte_length NULL and the JSON error body. Errors: sync.invalid_request (22023: NULL or empty partition, actor_id or blob_id). SECURITY DEFINER.';
