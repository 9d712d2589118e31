COMMENT ON TABLE syncular.sync_segment_secret IS
'The HMAC-SHA256 key of signed segment URLs (SPEC §5.4), created with the extension. Owner-only: readable by no '
'role the operator does not grant. Replace it (UPDATE ... SET key = <32 random bytes>) to invalidate every '
'issued URL at once.';
