CREATE FUNCTION syncular.shard_conninfos() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT DISTINCT regexp_replace(substr(o, strpos(o, '=') + 1),
                                 '(^|\s)(user|password)\s*=\s*(''([^''\\]|\\.)*''|\S+)', '', 'g')
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o ~ '^p[0-9]+='
   ORDER BY 1
$$;
