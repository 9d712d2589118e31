CREATE FUNCTION syncular.set_scope_resolver(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_scope_resolver', jsonb_build_object('fn', fn))
$$;
