CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('authenticator', fn,
      ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[], 'jsonb'::regtype, true,
      '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
