COMMENT ON FUNCTION syncular._r_operations_http(bytea, text, text, text) IS
'Internal. PL/Proxy call of syncular.operations_http on the shard of partition.';
