COMMENT ON FUNCTION syncular._tag_checkpoints(jsonb) IS
'Internal. The checkpoint declarations with "shardDatabase" (the database of the partition''s shard) added to each.';
