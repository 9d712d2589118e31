COMMENT ON FUNCTION syncular.realtime_fanout(text, bigint, jsonb) IS
'Routed: runs syncular.realtime_fanout (same arguments, rows and errors; see its COMMENT in the syncular extension) on '
'the shard of partition; the rows come back in the shard''s order. A shard PL/Proxy cannot reach raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}). The registrations are trusted input: grant '
'EXECUTE only to the gateway role. docs/scaling.md, SPEC §8.2.';
