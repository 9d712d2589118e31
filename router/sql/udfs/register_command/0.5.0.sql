CREATE FUNCTION syncular.register_command(operation_id text, authorize text, command text)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_command', jsonb_build_object('operationId', operation_id,
                                                                  'authorize', authorize, 'command', command))
$$;
