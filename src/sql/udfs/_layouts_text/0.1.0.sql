-- The layouts JSON text of the marker (§4 sync_schema_meta): {"<table>":[{"name":..,"type":..,
-- "nullable":..},...],...} in compiled order, compact, nothing else.
CREATE FUNCTION syncular._layouts_text(compiled jsonb) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT '{' || coalesce(string_agg(to_json(t.value ->> 'name')::text || ':[' ||
           (SELECT coalesce(string_agg(format('{"name":%s,"type":%s,"nullable":%s}',
                                              to_json(c.value ->> 'name')::text,
                                              to_json(c.value ->> 'type')::text,
                                              c.value ->> 'nullable'), ',' ORDER BY c.n), '')
              FROM jsonb_array_elements(t.value -> 'columns') WITH ORDINALITY AS c(value, n))
           || ']', ',' ORDER BY t.n), '') || '}'
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, n)
$$;
