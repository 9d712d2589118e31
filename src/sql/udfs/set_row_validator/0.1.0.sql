CREATE FUNCTION syncular.set_row_validator(tbl text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF tbl IS NULL OR NOT EXISTS (
       SELECT 1 FROM syncular.sync_settings s,
                     jsonb_array_elements(CASE WHEN jsonb_typeof(s.compiled -> 'tables') = 'array'
                                               THEN s.compiled -> 'tables' ELSE '[]'::jsonb END) t
        WHERE s.id = 1 AND t ->> 'name' = set_row_validator.tbl) THEN
    PERFORM syncular._raise('sync.unknown_table', 'table is not a synced table of the registered schema',
                            jsonb_build_object('table', tbl));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_row_validators v WHERE v.tbl = set_row_validator.tbl;
  ELSE
    PERFORM syncular._check_hook_signature('row_validator', fn,
      ARRAY['text', 'text', 'text', 'jsonb', 'jsonb', 'text', 'text']::regtype[], 'void'::regtype, false,
      '(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void, not STRICT');
    INSERT INTO syncular.sync_row_validators AS v (tbl, fn) VALUES (set_row_validator.tbl, fn)
      ON CONFLICT ON CONSTRAINT sync_row_validators_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
  PERFORM syncular._touch_settings();
END
$$;
