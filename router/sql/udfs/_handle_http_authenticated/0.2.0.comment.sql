COMMENT ON FUNCTION syncular._handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'Internal. The body of the router''s syncular.handle_http_authenticated.';
