-- syncular install script, part 20: hook registration (DESIGN.md decision 7).
--
-- Hooks are plain SQL-callable functions registered by regprocedure in syncular.sync_settings.

CREATE FUNCTION syncular.set_scope_resolver(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
BEGIN
  IF fn IS NOT NULL THEN
    SELECT * INTO p FROM pg_proc WHERE oid = fn;
    IF NOT FOUND
       OR p.prokind <> 'f'
       OR p.proretset
       OR p.prorettype <> 'jsonb'::regtype
       OR p.pronargs <> 3
       -- compare as text: oidvector::oid[] has lower bound 0, so array equality would fail
       OR p.proargtypes::text <> concat_ws(' ', 'text'::regtype::oid, 'text'::regtype::oid, 'text'::regtype::oid)
       OR p.provariadic <> 0 THEN
      PERFORM syncular._raise('sync.storage.hook_signature',
        'a scope resolver must be a function (text, text, text) RETURNS jsonb',
        jsonb_build_object('hook', 'scope_resolver', 'function', fn::text,
                           'expected', '(text, text, text) RETURNS jsonb'));
    END IF;
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, scope_resolver) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET scope_resolver = EXCLUDED.scope_resolver;
END
$$;
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (DESIGN.md decision 7; data-model-and-storage.md §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
