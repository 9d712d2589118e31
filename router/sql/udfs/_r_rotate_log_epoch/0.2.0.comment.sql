COMMENT ON FUNCTION syncular._r_rotate_log_epoch(text) IS
'Internal. PL/Proxy call of syncular.rotate_log_epoch on the shard of partition.';
