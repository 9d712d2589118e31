COMMENT ON FUNCTION syncular._r_handle(bytea, text, text) IS
'Internal. PL/Proxy call of syncular.handle on the shard of partition.';
