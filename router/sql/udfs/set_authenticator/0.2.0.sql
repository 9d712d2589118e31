CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
  expected constant text := '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb';
BEGIN
  IF fn IS NOT NULL THEN
    SELECT * INTO p FROM pg_proc WHERE oid = fn;
    IF NOT FOUND OR p.prokind <> 'f' OR p.proretset OR p.prorettype <> 'jsonb'::regtype OR p.provariadic <> 0
       OR p.proargtypes <> array_to_string(ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[]::oid[], ' ')::oidvector THEN
      RAISE EXCEPTION 'an authenticator must be a function %', expected USING ERRCODE = '22023',
        DETAIL = jsonb_build_object('code', 'sync.storage.hook_signature', 'details',
                   jsonb_build_object('hook', 'authenticator', 'function', fn::text, 'expected', expected))::text;
    END IF;
  END IF;
  INSERT INTO syncular.router_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
