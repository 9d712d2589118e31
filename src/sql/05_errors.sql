-- syncular install script, part 05: the error catalogue (src/errors.c).

CREATE FUNCTION syncular._raise(code text, message text, details jsonb DEFAULT NULL)
RETURNS void LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_raise';
COMMENT ON FUNCTION syncular._raise(text, text, jsonb) IS
'Internal. Raises a catalogue code as an ERROR: SQLSTATE from the catalogue (see syncular.error_catalog()), '
'message as given, DETAIL = {"code": code, "details": details}. Used by the plpgsql parts of the extension.';

CREATE FUNCTION syncular.error_catalog(
  OUT code text, OUT category text, OUT retryable boolean, OUT recommended_action text,
  OUT http_status integer, OUT sqlstate text)
RETURNS SETOF record LANGUAGE C STABLE AS 'MODULE_PATHNAME', 'syncular_error_catalog';
COMMENT ON FUNCTION syncular.error_catalog() IS
'The Syncular error catalogue as this extension uses it (SPEC §10, plus the host storage codes sync.storage.*): one row per code '
'with category, retryable, recommendedAction, HTTP status (NULL for host sync.storage.* codes, which never travel '
'on the wire) and the SQLSTATE used when the code is raised. Never raises.';

CREATE FUNCTION syncular._raise(code text, message text, details jsonb, hint text)
RETURNS void LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_raise';
COMMENT ON FUNCTION syncular._raise(text, text, jsonb, text) IS
'Internal. syncular._raise(code, message, details) with an errhint (NULL = none): what the operator can do '
'about the error. Used by schema registration.';
