-- syncular install script, part 20: hook registration (DESIGN.md decision 7).
--
-- Hooks are plain SQL-callable functions registered by regprocedure in syncular.sync_settings.

-- Raises sync.storage.hook_signature unless fn is a plain function with exactly these argument
-- types and this return type (and, when strict_ok is false, not STRICT).
CREATE FUNCTION syncular._check_hook_signature(hook text, fn regprocedure, argtypes regtype[],
                                               rettype regtype, strict_ok boolean, expected text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
BEGIN
  SELECT * INTO p FROM pg_proc WHERE oid = fn;
  IF NOT FOUND
     OR p.prokind <> 'f'
     OR p.proretset
     OR p.prorettype <> rettype
     OR p.pronargs <> cardinality(argtypes)
     -- compare as oidvector: oidvector::oid[] has lower bound 0 and never equals an ARRAY[...]
     OR p.proargtypes <> array_to_string(argtypes::oid[], ' ')::oidvector
     OR p.provariadic <> 0
     OR (p.proisstrict AND NOT strict_ok) THEN
    PERFORM syncular._raise('sync.storage.hook_signature',
      format('a %s must be a function %s', replace(hook, '_', ' '), expected),
      jsonb_build_object('hook', hook, 'function', fn::text, 'expected', expected));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._check_hook_signature(text, regprocedure, regtype[], regtype, boolean, text) IS
  'Internal. Checks a hook function in pg_proc: a plain function (prokind f, not set-returning, not variadic) whose input argument types are exactly argtypes (names are free) and whose return type is rettype; when strict_ok is false it must not be STRICT. Raises sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) otherwise.';

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
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (SPEC §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
