COMMENT ON FUNCTION syncular._r_pull(text,text,text,jsonb,jsonb) IS
'Internal. PL/Proxy call of syncular.pull on the shard of p_partition.';
