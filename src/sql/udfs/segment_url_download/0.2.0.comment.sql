COMMENT ON FUNCTION syncular.segment_url_download(text, text, text, text) IS
'A bare signed-URL fetch (SPEC §5.4) as one row, for the gateway route that serves syncular.segment_url_base: no '
'host authentication, the token is the whole grant. segment_id: the path''s segment id; st: the st query '
'parameter; if_none_match, accept_encoding: the request headers. Verifies the HMAC, exp (60 s skew), seg, and that '
'the token''s scope digest was published for the segment in the partition its aud names (live log epoch), then '
'answers like syncular.segment_download: 200 (zstd/gzip/identity), 304, 403 sync.forbidden (malformed or '
'tampered token, another segment), 404 sync.segment_expired (token or publication expired, RFC 0007 checkpoint '
'ahead), 404 sync.not_found (forgotten, rotated epoch), 503 sync.schema_not_ready. SECURITY DEFINER like '
'syncular.handle.';
