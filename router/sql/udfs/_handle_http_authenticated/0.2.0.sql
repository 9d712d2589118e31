CREATE FUNCTION syncular._handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                    ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  who jsonb;
  msg text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.internal_error', 'internal server error');
    RETURN;
  END;
  IF who IS NULL THEN
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.auth_required', 'authentication required');
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular._handle_http(request, who ->> 'partition', who ->> 'actorId', ctype) h;
END
$$;
