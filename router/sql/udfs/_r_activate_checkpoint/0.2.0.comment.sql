COMMENT ON FUNCTION syncular._r_activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Internal. PL/Proxy call of syncular.activate_checkpoint on the shard of partition.';
