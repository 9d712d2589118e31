-- Raises sync.storage.invalid_reaction.
CREATE FUNCTION syncular._invalid_reaction(idx integer, field text, reason text, extra jsonb DEFAULT '{}')
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.invalid_reaction', 'invalid reaction record',
    jsonb_strip_nulls(jsonb_build_object('index', idx, 'field', field, 'reason', reason)) || coalesce(extra, '{}'));
END
$$;
