COMMENT ON FUNCTION syncular._r_source_coverage_seq(text,text[]) IS
'Internal. PL/Proxy call of syncular.source_coverage_seq on the shard of partition.';
