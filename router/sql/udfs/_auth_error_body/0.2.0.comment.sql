COMMENT ON FUNCTION syncular._auth_error_body(text, text) IS
'Internal. The HTTP answer of a refused request (sync.auth_required: 401) or of a failing authenticator '
'(sync.internal_error: 500) as the shard''s handle_http_authenticated writes it (SPEC §10.1 body).';
