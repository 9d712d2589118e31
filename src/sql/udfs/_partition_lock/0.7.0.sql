CREATE FUNCTION syncular._partition_lock(partition text) RETURNS void
LANGUAGE C STRICT AS 'MODULE_PATHNAME', 'syncular_partition_lock';
