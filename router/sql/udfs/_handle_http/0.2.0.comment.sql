COMMENT ON FUNCTION syncular._handle_http(bytea, text, text, text) IS
'Internal. The body of the routed syncular.handle_http (a plpgsql function cannot name an argument and a result '
'column content_type both).';
