COMMENT ON FUNCTION syncular.shard_connstr(integer) IS
'The libpq connection string of logical shard `shard` (option p<shard> of server syncular), NULL when absent. '
'Raises nothing.';
