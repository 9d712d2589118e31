CREATE FUNCTION syncular.ensure_schema(ir jsonb, checkpoints jsonb DEFAULT '[]'::jsonb,
                                       app_schema text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('ensure_schema', jsonb_strip_nulls(jsonb_build_object(
           'ir', ir, 'checkpoints', syncular._tag_checkpoints(checkpoints), 'appSchema', app_schema)))
$$;
