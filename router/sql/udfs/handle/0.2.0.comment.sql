COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Routed: one SSP2 round (request bytes in, response bytes out) served by syncular.handle on the shard of partition '
'(logical shard hashtext(partition) & (N - 1)); the response bytes are the shard''s. Errors: those of the shard''s '
'syncular.handle with their SQLSTATE, message, DETAIL and HINT; a shard PL/Proxy cannot reach (connection refused or '
'lost, timeout, bad cluster configuration) raises sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code": '
'"sync.schema_not_ready", "details": {"shardUnavailable": true}}); the PL/Proxy message goes to the server log. '
'The round commits on the shard when it ends, whatever the router''s transaction does. docs/scaling.md, SPEC §1.';
