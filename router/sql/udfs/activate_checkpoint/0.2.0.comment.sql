COMMENT ON FUNCTION syncular.activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Routed: runs syncular.activate_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
