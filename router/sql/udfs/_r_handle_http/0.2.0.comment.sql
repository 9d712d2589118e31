COMMENT ON FUNCTION syncular._r_handle_http(bytea, text, text, text) IS
'Internal. PL/Proxy call of syncular.handle_http on the shard of partition.';
