COMMENT ON FUNCTION syncular.prune_reactions(text,bigint,bigint,integer,bigint) IS
'Routed: runs syncular.prune_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
