-- Projection expression of column `col` (schema type coltype) from decode_row's jsonb `j`.
CREATE FUNCTION syncular._projection_expr(col text, coltype text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE coltype
    WHEN 'integer' THEN format('(x.j ->> %L)::bigint', col)
    WHEN 'float'   THEN format('(x.j ->> %L)::double precision', col)
    WHEN 'boolean' THEN format('(x.j ->> %L)::boolean', col)
    WHEN 'json'    THEN format('CASE WHEN jsonb_typeof(x.j -> %L) = ''null'' THEN NULL ELSE x.j -> %L END', col, col)
    WHEN 'bytes'   THEN format('decode(x.j ->> %L, ''base64'')', col)
    WHEN 'crdt'    THEN format('decode(x.j ->> %L, ''base64'')', col)
    ELSE format('(x.j ->> %L)', col) END
$$;
