-- The public entry point.  Deliberately without a SET clause so that current_schema() is the
-- caller's; its only statement is fully qualified.
CREATE FUNCTION syncular.ensure_schema(ir jsonb, checkpoints jsonb DEFAULT '[]'::jsonb,
                                       app_schema text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql VOLATILE AS $$
  SELECT syncular._ensure_schema(ir, checkpoints, app_schema, pg_catalog.current_schema())
$$;
