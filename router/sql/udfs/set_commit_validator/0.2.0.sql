CREATE FUNCTION syncular.set_commit_validator(fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_commit_validator', jsonb_build_object('fn', fn))
$$;
