CREATE FUNCTION syncular.register_query(operation_id text, sql text, columns jsonb, tables text[],
                                        params jsonb DEFAULT '[]', mode text DEFAULT 'scoped',
                                        coverage jsonb DEFAULT '[]', authorize text DEFAULT NULL,
                                        max_rows integer DEFAULT 1000)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_query', jsonb_build_object('operationId', operation_id, 'sql', sql,
    'columns', columns, 'tables', to_jsonb(tables), 'params', params, 'mode', mode, 'coverage', coverage,
    'authorize', authorize, 'maxRows', max_rows))
$$;
