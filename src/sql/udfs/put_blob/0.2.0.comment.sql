COMMENT ON FUNCTION syncular.put_blob(text, text, text, bytea) IS
'Blob upload in one call (SPEC §5.9.3; docs/blobs.md): blob_upload_begin + blob_upload_append + blob_upload_finish over body (memory: body once plus one 1 MiB slice). Arguments as blob_upload_begin, body the bytes. Returns and errors as the three steps. SECURITY DEFINER.';
