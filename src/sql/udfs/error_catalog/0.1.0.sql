CREATE FUNCTION syncular.error_catalog(
  OUT code text, OUT category text, OUT retryable boolean, OUT recommended_action text,
  OUT http_status integer, OUT sqlstate text)
RETURNS SETOF record LANGUAGE C STABLE AS 'MODULE_PATHNAME', 'syncular_error_catalog';
