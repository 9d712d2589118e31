COMMENT ON FUNCTION syncular.error_catalog() IS
'The Syncular error catalogue as this extension uses it (SPEC §10, plus the host storage codes sync.storage.*): one row per code '
'with category, retryable, recommendedAction, HTTP status (NULL for host sync.storage.* codes, which never travel '
'on the wire) and the SQLSTATE used when the code is raised. Never raises.';
