CREATE FUNCTION syncular.set_row_validator(tbl text, fn text) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('set_row_validator', jsonb_build_object('table', tbl, 'fn', fn))
$$;
