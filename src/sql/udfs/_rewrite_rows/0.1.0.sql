-- Re-encodes payloads of one table with trailing NULLs (old_n -> new_n columns) and backfills the
-- listed projection columns (backfill: [{name, type}]), walking (partition, row_id) keysets in
-- batches of 500.  Returns the number of rows rewritten.
CREATE FUNCTION syncular._rewrite_rows(app_schema text, tbl text, old_n integer, new_n integer,
                                       backfill jsonb) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  payload_expr text;
  decode_expr  text := 'NULL::jsonb';
  set_list     text := '_sync_payload = x.p';
  stmt         text;
  last_p       text;
  last_r       text;
  batch        bigint;
  total        bigint := 0;
BEGIN
  IF new_n = old_n AND jsonb_array_length(backfill) = 0 THEN
    RETURN 0;
  END IF;
  payload_expr := CASE WHEN new_n > old_n
                       THEN 'syncular._payload_append_nulls(k._sync_payload, $3, $4)'
                       ELSE 'k._sync_payload' END;
  IF jsonb_array_length(backfill) > 0 THEN
    decode_expr := format('syncular.decode_row(%L, b.p)', tbl);
    SELECT set_list || ', ' || string_agg(format('%I = %s', e.value ->> 'name',
                                                 syncular._projection_expr(e.value ->> 'name', e.value ->> 'type')),
                                          ', ' ORDER BY e.n)
      INTO set_list
      FROM jsonb_array_elements(backfill) WITH ORDINALITY AS e(value, n);
  END IF;
  stmt := format(
    'WITH u AS ('
    '  UPDATE %1$I.%2$I AS t SET %3$s'
    '    FROM (SELECT b.pk1, b.pk2, b.p, %4$s AS j'
    '            FROM (SELECT k._sync_partition AS pk1, k._sync_row_id AS pk2, %5$s AS p'
    '                    FROM %1$I.%2$I AS k'
    '                   WHERE $1::text IS NULL OR (k._sync_partition, k._sync_row_id) > ($1, $2)'
    '                   ORDER BY k._sync_partition, k._sync_row_id LIMIT 500) AS b) AS x'
    '   WHERE t._sync_partition = x.pk1 AND t._sync_row_id = x.pk2'
    '   RETURNING t._sync_partition, t._sync_row_id)'
    ' SELECT count(*) OVER (), _sync_partition, _sync_row_id FROM u'
    '  ORDER BY _sync_partition DESC, _sync_row_id DESC LIMIT 1',
    app_schema, tbl, set_list, decode_expr, payload_expr);
  LOOP
    batch := NULL;
    EXECUTE stmt INTO batch, last_p, last_r USING last_p, last_r, old_n, new_n;
    EXIT WHEN batch IS NULL;
    total := total + batch;
    EXIT WHEN batch < 500;
  END LOOP;
  RETURN total;
END
$$;
