CREATE FUNCTION syncular.realtime_registration_cache(OUT entries bigint, OUT bytes bigint)
RETURNS record LANGUAGE C VOLATILE PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'syncular_realtime_registration_cache';
