COMMENT ON FUNCTION syncular._r_presence_authorize(text, text, text, text[]) IS
'Internal. PL/Proxy call of syncular.presence_authorize on the shard of partition.';
