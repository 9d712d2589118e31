COMMENT ON FUNCTION syncular._r_cluster_call(text, jsonb, boolean) IS
'Internal. PL/Proxy call of syncular.cluster_call on every shard; one {database, result} per shard.';
