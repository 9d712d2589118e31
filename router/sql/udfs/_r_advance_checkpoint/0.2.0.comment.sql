COMMENT ON FUNCTION syncular._r_advance_checkpoint(text,text,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.advance_checkpoint on the shard of partition.';
