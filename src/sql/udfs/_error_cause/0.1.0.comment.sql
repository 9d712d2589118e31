COMMENT ON FUNCTION syncular._error_cause(text, text) IS
'Internal. Turns a caught catalogue error (MESSAGE_TEXT, PG_EXCEPTION_DETAIL) into {code, message, details}; '
'NULL when the detail is not {"code": ...} JSON.';
