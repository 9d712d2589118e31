COMMENT ON FUNCTION syncular._r_fail_reaction(text,text,text,jsonb,boolean,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.fail_reaction on the shard of partition.';
