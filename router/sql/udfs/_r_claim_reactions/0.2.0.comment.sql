COMMENT ON FUNCTION syncular._r_claim_reactions(text,text,integer,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.claim_reactions on the shard of partition.';
