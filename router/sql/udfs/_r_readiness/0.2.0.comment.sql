COMMENT ON FUNCTION syncular._r_readiness(jsonb) IS
'Internal. PL/Proxy call of syncular.readiness on every shard; one {database, readiness} per shard.';
