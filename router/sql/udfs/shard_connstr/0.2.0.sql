CREATE FUNCTION syncular.shard_connstr(shard integer) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT substr(o, length('p' || shard::text) + 2)
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o LIKE 'p' || shard::text || '=%'
$$;
