CREATE FUNCTION syncular._r_readiness(checkpoints jsonb)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON ALL;
  SELECT pg_catalog.jsonb_build_object('database', pg_catalog.current_database(),
                                       'readiness', syncular.readiness(checkpoints));
$$;
