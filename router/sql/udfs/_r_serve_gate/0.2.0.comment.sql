COMMENT ON FUNCTION syncular._r_serve_gate(text,jsonb,integer) IS
'Internal. PL/Proxy call of syncular.serve_gate on the shard of partition.';
