COMMENT ON FUNCTION syncular._raise(text, text, jsonb, text) IS
'Internal. syncular._raise(code, message, details) with an errhint (NULL = none): what the operator can do '
'about the error. Used by schema registration.';
