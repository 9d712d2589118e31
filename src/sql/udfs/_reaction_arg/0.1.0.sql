-- A non-negative (or positive) safe-integer argument, else sync.storage.invalid_limit.
CREATE FUNCTION syncular._reaction_arg(name text, value bigint, lo bigint, hi bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF value IS NULL OR value < lo OR value > hi THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', format('%s must be an integer in %s..%s', name, lo, hi),
                            jsonb_build_object('argument', name, 'value', value, 'min', lo, 'max', hi));
  END IF;
  RETURN value;
END
$$;
