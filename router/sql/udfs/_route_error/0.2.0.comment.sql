COMMENT ON FUNCTION syncular._route_error(text, text, text, text, text, boolean) IS
'Internal. Raises the error caught around a routed call: PL/Proxy''s own failure (shard unreachable) as '
'sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code": "sync.schema_not_ready", "details": {"shardUnavailable": '
'true}}) after a LOG line with PL/Proxy''s message (and the shard and partition unless cluster_wide); a shard''s error with its SQLSTATE, '
'message, DETAIL and HINT as the shard raised them (PL/Proxy''s prefixes removed).';
