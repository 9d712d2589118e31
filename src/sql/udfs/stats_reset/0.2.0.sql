CREATE FUNCTION syncular.stats_reset() RETURNS void
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_reset';
