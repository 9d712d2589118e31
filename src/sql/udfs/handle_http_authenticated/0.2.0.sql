CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb,
                                                   query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  who jsonb;
  msg text;
  err_code text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    err_code := 'sync.internal_error';
    msg := 'internal server error';
  END;
  IF err_code IS NULL AND who IS NULL THEN
    err_code := 'sync.auth_required';
    msg := 'authentication required';
  END IF;
  IF err_code IS NOT NULL THEN
    RETURN QUERY
      SELECT c.http_status, 'application/json'::text,
             convert_to(json_build_object('code', c.code, 'category', c.category, 'retryable', c.retryable,
                                          'recommendedAction', c.recommended_action, 'message', msg)::text,
                        'UTF8')
        FROM syncular.error_catalog() c WHERE c.code = err_code;
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular.handle_http(request, who ->> 'partition', who ->> 'actorId',
                              request_content_type) h;
END
$$;
