COMMENT ON FUNCTION syncular._r_complete_reaction(text,text,text,bigint) IS
'Internal. PL/Proxy call of syncular.complete_reaction on the shard of partition.';
