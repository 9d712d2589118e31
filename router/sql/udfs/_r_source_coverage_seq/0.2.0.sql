CREATE FUNCTION syncular._r_source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.source_coverage_seq;
$$;
