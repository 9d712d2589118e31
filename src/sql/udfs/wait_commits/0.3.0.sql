CREATE FUNCTION syncular.wait_commits(after bigint, timeout_ms integer)
RETURNS TABLE(kind text, "position" bigint, partition text, commit_seq bigint)
LANGUAGE C VOLATILE PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'syncular_wait_commits';
