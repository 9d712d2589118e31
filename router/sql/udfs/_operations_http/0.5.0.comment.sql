COMMENT ON FUNCTION syncular._operations_http(bytea, text, text, text) IS
'Internal. The body of the routed syncular.operations_http (a plpgsql function cannot name an argument and a result '
'column content_type both).';
