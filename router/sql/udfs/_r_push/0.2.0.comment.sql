COMMENT ON FUNCTION syncular._r_push(text,text,text,jsonb) IS
'Internal. PL/Proxy call of syncular.push on the shard of p_partition.';
