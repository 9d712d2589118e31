COMMENT ON FUNCTION syncular._r_declare_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.declare_checkpoint on the shard of partition.';
