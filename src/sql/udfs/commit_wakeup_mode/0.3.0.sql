CREATE FUNCTION syncular.commit_wakeup_mode() RETURNS text
LANGUAGE C VOLATILE PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_commit_wakeup_mode';
