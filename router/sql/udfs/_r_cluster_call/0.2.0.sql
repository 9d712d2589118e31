CREATE FUNCTION syncular._r_cluster_call(call text, args jsonb, apply boolean)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON ALL;
  SELECT pg_catalog.jsonb_build_object('database', pg_catalog.current_database(),
                                       'result', syncular.cluster_call(call, args, apply));
$$;
