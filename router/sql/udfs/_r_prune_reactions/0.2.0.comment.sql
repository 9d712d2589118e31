COMMENT ON FUNCTION syncular._r_prune_reactions(text,bigint,bigint,integer,bigint) IS
'Internal. PL/Proxy call of syncular.prune_reactions on the shard of partition.';
