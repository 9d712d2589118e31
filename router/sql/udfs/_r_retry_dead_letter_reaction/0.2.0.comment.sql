COMMENT ON FUNCTION syncular._r_retry_dead_letter_reaction(text,text,bigint) IS
'Internal. PL/Proxy call of syncular.retry_dead_letter_reaction on the shard of partition.';
