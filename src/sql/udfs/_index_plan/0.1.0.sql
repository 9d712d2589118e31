-- Every physical index of the compiled schema: the declared indexes of materialized tables, then
-- one non-unique index per reference child column (materialized tables only; skipped when a
-- declared index already leads with that column).
CREATE FUNCTION syncular._index_plan(compiled jsonb)
RETURNS TABLE (tbl text, physical text, columns text[], is_unique boolean)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT t.value ->> 'name', ix.value ->> 'physical',
         ARRAY(SELECT jsonb_array_elements_text(ix.value -> 'columns')),
         (ix.value -> 'unique')::text::boolean
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, tn)
    CROSS JOIN LATERAL jsonb_array_elements(t.value -> 'indexes') WITH ORDINALITY AS ix(value, n)
   WHERE (t.value -> 'materialize')::text::boolean
  UNION ALL
  SELECT t.value ->> 'name',
         syncular._physical_index_name('ref_' || (t.value ->> 'name') || '_' || (r.value ->> 'column')),
         ARRAY[r.value ->> 'column'], false
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS t(value, tn)
    CROSS JOIN LATERAL jsonb_array_elements(t.value -> 'references') WITH ORDINALITY AS r(value, n)
   WHERE (t.value -> 'materialize')::text::boolean
     AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(t.value -> 'indexes') d
                      WHERE d.value -> 'columns' ->> 0 = r.value ->> 'column')
$$;
