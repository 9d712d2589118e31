COMMENT ON FUNCTION syncular._raise(text, text, jsonb) IS
'Internal. Raises a catalogue code as an ERROR: SQLSTATE from the catalogue (see syncular.error_catalog()), '
'message as given, DETAIL = {"code": code, "details": details}. Used by the plpgsql parts of the extension.';
