COMMENT ON FUNCTION syncular._r_operations_watch_rerun(text, jsonb) IS
'Internal. PL/Proxy call of syncular.operations_watch_rerun on the shard of partition.';
