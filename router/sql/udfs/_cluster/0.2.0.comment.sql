COMMENT ON FUNCTION syncular._cluster(text, jsonb) IS
'Internal. A cluster-wide call in two rounds (check on every shard, then apply on every shard); returns '
'{shards: [{database, result}, ...]} (ordered by database), with "action" for ensure_schema.';
