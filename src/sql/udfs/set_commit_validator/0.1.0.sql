CREATE FUNCTION syncular.set_commit_validator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('commit_validator', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'void'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void');
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, commit_validator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET commit_validator = EXCLUDED.commit_validator;
END
$$;
