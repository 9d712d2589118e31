COMMENT ON FUNCTION syncular.shard_count() IS
'The number of logical shards: the p<i> options of the SQL/MED server syncular (0 when the server does not exist). '
'Raises nothing.';
