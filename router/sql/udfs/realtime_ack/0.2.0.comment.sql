COMMENT ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) IS
'Routed: runs syncular.realtime_ack (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md, SPEC §8.2.';
