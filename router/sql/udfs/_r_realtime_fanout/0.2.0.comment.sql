COMMENT ON FUNCTION syncular._r_realtime_fanout(text, bigint, jsonb) IS
'Internal. PL/Proxy call of syncular.realtime_fanout on the shard of partition.';
