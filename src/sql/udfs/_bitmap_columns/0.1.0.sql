-- Names of the columns marked in a conflictColumns bitmap (presence layout, LSB first).
CREATE FUNCTION syncular._bitmap_columns(p_table text, p_bitmap_b64 text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(c.col->'name' ORDER BY c.ord), '[]'::jsonb)
    FROM syncular.sync_settings s,
         jsonb_array_elements(s.compiled->'tables') t(tbl),
         jsonb_array_elements(t.tbl->'columns') WITH ORDINALITY c(col, ord)
   WHERE s.id = 1 AND t.tbl->>'name' = p_table AND p_bitmap_b64 IS NOT NULL
     AND length(decode(p_bitmap_b64, 'base64')) > (c.ord - 1) / 8
     -- get_bit numbers bits LSB-first within each byte, as the bitmap does
     AND get_bit(decode(p_bitmap_b64, 'base64'), (c.ord - 1)::int) = 1
$$;
