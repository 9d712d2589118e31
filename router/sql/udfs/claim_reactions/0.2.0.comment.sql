COMMENT ON FUNCTION syncular.claim_reactions(text,text,integer,bigint,bigint) IS
'Routed: runs syncular.claim_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
