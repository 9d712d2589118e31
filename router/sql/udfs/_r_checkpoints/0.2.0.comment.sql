COMMENT ON FUNCTION syncular._r_checkpoints(text) IS
'Internal. PL/Proxy call of syncular.checkpoints on the shard of partition.';
