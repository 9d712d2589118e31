CREATE FUNCTION syncular.set_scope_resolver(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('scope_resolver', fn,
      ARRAY['text', 'text', 'text']::regtype[], 'jsonb'::regtype, true, '(text, text, text) RETURNS jsonb');
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, scope_resolver) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET scope_resolver = EXCLUDED.scope_resolver;
END
$$;
