CREATE FUNCTION syncular._capture_bypass(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_capture_bypass' LANGUAGE C STRICT;
