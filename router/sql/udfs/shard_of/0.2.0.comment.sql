COMMENT ON FUNCTION syncular.shard_of(text) IS
'The logical shard (0 .. N-1, the option p<i> of server syncular) that serves a partition, as PL/Proxy maps it: '
'shard_hash(partition) & (N - 1). NULL-free; meaningless (-1 mask) when the server has no p<i> options.';
