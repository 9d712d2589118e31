COMMENT ON FUNCTION syncular._r_realtime_ack(text, text, text, bigint, text) IS
'Internal. PL/Proxy call of syncular.realtime_ack on the shard of partition.';
