COMMENT ON FUNCTION syncular._r_prune(text,jsonb) IS
'Internal. PL/Proxy call of syncular.prune on the shard of partition.';
