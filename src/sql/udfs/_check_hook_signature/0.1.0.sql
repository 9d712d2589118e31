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
