CREATE FUNCTION syncular.source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(max(ch.commit_seq), 0)
    FROM syncular.changes ch
   WHERE ch.partition = $1 AND ch.tbl = ANY ($2)
$$;
