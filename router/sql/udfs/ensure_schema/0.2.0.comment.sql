COMMENT ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) IS
'Cluster-wide: registers the app schema (syncular.ensure_schema''s arguments) on every shard, all or nothing: every '
'shard first runs it and rolls it back, then, when none refused, every shard applies it. app_schema NULL: the '
'registered app schema of each shard, else public (the router''s current_schema() does not cross). A checkpoint '
'declaration is installed on the shard of its partition only (its writer fence and serve gate are that shard''s). Returns '
'{"action": <the shards'' common action, or "mixed">, "shards": [{"database", "result"}, ...]}. Errors: the first '
'refusing shard''s error (its SQLSTATE, message, DETAIL), nothing applied anywhere; an unreachable shard raises '
'sync.schema_not_ready (55000, details {"shardUnavailable": true}), nothing applied. A shard lost between the check '
'and the apply round leaves the others applied: re-run (ensure_schema is idempotent). RFC 0007 §3.4, docs/scaling.md.';
