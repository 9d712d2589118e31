CREATE FUNCTION syncular.cluster_call(call text, args jsonb, apply boolean DEFAULT true) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  result jsonb;
BEGIN
  IF apply THEN
    RETURN syncular._cluster_dispatch(call, args);
  END IF;
  -- the check round: run the call in a subtransaction and roll it back (its locks go with it);
  -- an error of the call itself propagates unchanged
  BEGIN
    result := syncular._cluster_dispatch(call, args);
    RAISE EXCEPTION 'cluster call checked' USING ERRCODE = 'SYCHK';
  EXCEPTION WHEN SQLSTATE 'SYCHK' THEN
    NULL;
  END;
  RETURN result;
END
$$;
