COMMENT ON FUNCTION syncular.operations_watch_rerun(text, jsonb) IS
'Routed: runs syncular.operations_watch_rerun (same arguments, rows and errors; see its COMMENT in the syncular '
'extension) on the shard of partition, one call for the whole batch; the rows come back in the shard''s order. A '
'shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details {"shardUnavailable": true}). REMOTE.md §6, '
'docs/operations-protocol.md "Live query watches".';
