CREATE FUNCTION syncular._operation_invalid(operation_id text, message text, rule text,
                                            extra jsonb DEFAULT '{}') RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.operation_invalid',
    format('operation %s: %s', coalesce(quote_literal(operation_id), 'NULL'), message),
    jsonb_build_object('operationId', operation_id, 'rule', rule) || coalesce(extra, '{}'),
    'Fix the registration (docs/operations-protocol.md) and register again; nothing was stored.');
END
$$;
