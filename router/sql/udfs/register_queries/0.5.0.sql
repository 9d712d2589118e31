CREATE FUNCTION syncular.register_queries(ir jsonb, max_rows integer DEFAULT 1000, privileged jsonb DEFAULT '{}')
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_queries', jsonb_build_object('ir', ir, 'maxRows', max_rows,
                                                                  'privileged', privileged))
$$;
