COMMENT ON FUNCTION syncular._shard_database(integer) IS
'Internal. The dbname of logical shard `shard`''s connection string; raises 22023 when it names none.';
