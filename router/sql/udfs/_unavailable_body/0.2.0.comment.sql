COMMENT ON FUNCTION syncular._unavailable_body() IS
'Internal. The HTTP JSON body a round of an unreachable shard answers: sync.schema_not_ready (503, retryable, '
'retryLater) with details {"shardUnavailable": true}.';
