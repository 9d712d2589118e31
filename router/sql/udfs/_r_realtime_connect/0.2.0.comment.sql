COMMENT ON FUNCTION syncular._r_realtime_connect(text, text, text) IS
'Internal. PL/Proxy call of syncular.realtime_connect on the shard of partition.';
