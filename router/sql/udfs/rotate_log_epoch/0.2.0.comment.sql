COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
'Routed: runs syncular.rotate_log_epoch (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
