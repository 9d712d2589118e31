COMMENT ON FUNCTION syncular.shard_hash(text) IS
'The routing hash of a partition: hashtext(partition) (hashtext('''') for NULL). PL/Proxy runs a partition''s calls '
'on logical shard shard_hash(partition) & (N - 1), N the number of p<i> options of server syncular. Raises nothing.';
