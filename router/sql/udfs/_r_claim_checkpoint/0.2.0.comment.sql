COMMENT ON FUNCTION syncular._r_claim_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.claim_checkpoint on the shard of partition.';
