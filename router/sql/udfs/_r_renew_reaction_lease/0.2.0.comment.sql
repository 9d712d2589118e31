COMMENT ON FUNCTION syncular._r_renew_reaction_lease(text,text,text,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.renew_reaction_lease on the shard of partition.';
