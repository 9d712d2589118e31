COMMENT ON FUNCTION syncular.pull(text,text,text,jsonb,jsonb) IS
'Routed: runs syncular.pull (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of p_partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
