CREATE FUNCTION syncular.set_reaction_planner(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_reaction_planner', jsonb_build_object('fn', fn))
$$;
