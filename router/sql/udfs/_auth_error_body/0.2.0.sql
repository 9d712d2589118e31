CREATE FUNCTION syncular._auth_error_body(code text, message text) RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE code WHEN 'sync.auth_required' THEN 401 ELSE 500 END, 'application/json'::text,
         convert_to(json_build_object('code', code,
                                      'category', CASE code WHEN 'sync.auth_required' THEN 'auth-required' ELSE 'internal' END,
                                      'retryable', true,
                                      'recommendedAction', CASE code WHEN 'sync.auth_required' THEN 'refreshAuth' ELSE 'retryLater' END,
                                      'message', message)::text, 'UTF8')
$$;
