CREATE FUNCTION syncular._create_indexes(app_schema text, compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT * FROM syncular._index_plan(compiled) LOOP
    EXECUTE format('CREATE %sINDEX %I ON %I.%I (_sync_partition, %s)',
                   CASE WHEN p.is_unique THEN 'UNIQUE ' ELSE '' END, p.physical, app_schema, p.tbl,
                   (SELECT string_agg(format('%I', col), ', ' ORDER BY n)
                      FROM unnest(p.columns) WITH ORDINALITY AS u(col, n)));
  END LOOP;
END
$$;
