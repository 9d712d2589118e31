COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text,text,bigint) IS
'Routed: runs syncular.retry_dead_letter_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
