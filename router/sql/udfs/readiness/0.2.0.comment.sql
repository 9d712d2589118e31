COMMENT ON FUNCTION syncular.readiness(jsonb) IS
'Cluster-wide syncular.readiness(checkpoints) (RFC 0007 §7): {ready, phase, schemaVersion, cause} of the first shard '
'(by database name) that is not ready, or of the first shard when all are, plus "shards": [{"database", "readiness"}, '
'...]. Errors: a shard''s error (sync.storage.invalid_checkpoints, 22023, for a bad list); an unreachable shard raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}): the cluster is not ready as a whole. Writes nothing.';
