COMMENT ON FUNCTION syncular.renew_reaction_lease(text,text,text,bigint,bigint) IS
'Routed: runs syncular.renew_reaction_lease (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';
